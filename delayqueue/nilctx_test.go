package delayqueue_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A nil context is refused by every method with ErrInvalidArgument: no
// panic, nothing sent, the delivery left as it was.
func TestNilContextIsRefused(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	q := newQueue(t, b, time.Minute, 0)
	_, err := q.Push(ctx, []byte("job"), 0)
	require.NoError(t, err)
	m, err := pollWithin(t, q, deliveredWithin)
	require.NoError(t, err)

	client, count := countedClient(t, b)
	same := newQueueOn(t, client, q.Config())
	var nilCtx context.Context
	for name, call := range map[string]func() error{
		"push":         func() error { _, err := same.Push(nilCtx, nil, 0); return err },
		"push at":      func() error { _, err := same.PushAt(nilCtx, nil, time.Now()); return err },
		"push batch":   func() error { _, err := same.PushBatch(nilCtx, []delayqueue.Job{{}}); return err },
		"poll":         func() error { _, err := same.Poll(nilCtx); return err },
		"ack":          func() error { return same.Ack(nilCtx, m) },
		"nack":         func() error { return same.Nack(nilCtx, m, 0) },
		"extend":       func() error { return same.Extend(nilCtx, m) },
		"len":          func() error { _, _, _, _, err := same.Len(nilCtx); return err },
		"dead letters": func() error { _, err := same.DeadLetters(nilCtx, 1); return err },
		"requeue":      func() error { _, err := same.Requeue(nilCtx, m.ID); return err },
		"drop":         func() error { _, err := same.Drop(nilCtx, m.ID); return err },
		"run": func() error {
			return same.Run(nilCtx, 1, func(context.Context, delayqueue.Message) error { return nil })
		},
	} {
		var err error
		assert.NotPanics(t, func() { err = call() }, name)
		assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument, name)
	}
	assert.Zero(t, count.Commands(), "nothing was sent")
	assert.Equal(t, [4]int64{0, 0, 1, 0}, lens(t, q), "the delivery is still in flight")
	require.NoError(t, q.Ack(ctx, m))
}
