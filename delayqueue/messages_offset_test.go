package delayqueue_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// Messages takes any offset of 0 or more: one past the end, however far,
// is an empty page, not an error from Redis.
func TestMessagesOffsetFarPastTheEnd(t *testing.T) {
	b := redistest.Redis(t)
	ctx := context.Background()
	q := newQueueOn(t, b.Client, delayqueue.Config{Key: b.Key(t, "dq-review:")})
	_, err := q.Push(ctx, []byte("x"), 0)
	require.NoError(t, err)
	for _, offset := range []int{1, 1 << 40, 100000000000000, math.MaxInt} {
		for _, st := range []delayqueue.State{delayqueue.Ready, delayqueue.Delayed, delayqueue.InFlight, delayqueue.Dead} {
			msgs, err := q.Messages(ctx, st, offset, 1)
			if assert.NoError(t, err, "offset %d, %v", offset, st) {
				assert.Empty(t, msgs)
			}
		}
	}
}
