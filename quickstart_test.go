package slotlimit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// The README's quickstart: an Acquire whose ctx reaches its deadline
// before a slot frees returns an error matching context.DeadlineExceeded,
// and the waiter holds nothing and has left the queue, so that the slot,
// once freed, goes to the next caller.
func TestAcquireDeadlineLeavesNothing(t *testing.T) {
	for _, fair := range []bool{false, true} {
		t.Run(fmt.Sprintf("fair=%v", fair), func(t *testing.T) {
			eachBackend(t, func(t *testing.T, b *backend) {
				key := testKey(t, b)
				l := newLimiterOn(t, b.Client, slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute, Fair: fair})
				_, err := l.TryAcquire(context.Background(), "holder")
				require.NoError(t, err)

				ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				defer cancel()
				done := acquireAsync(ctx, l, "worker-3", 1)
				select {
				case err := <-done:
					require.ErrorIs(t, err, context.DeadlineExceeded)
				case <-time.After(20 * time.Second):
					t.Fatal("Acquire did not return after its deadline")
				}

				snap, err := l.Inspect(context.Background())
				require.NoError(t, err)
				assert.Equal(t, []string{"holder"}, holderIDs(t, l), "the waiter holds nothing")
				assert.Empty(t, snap.Queue, "the waiter left the queue")
				require.NoError(t, l.Release(context.Background(), "holder"))
				res, err := l.TryAcquire(context.Background(), "next")
				require.NoError(t, err)
				assert.True(t, res.Acquired, "the freed slot goes to the next caller, not to the waiter that gave up")
			})
		})
	}
}
