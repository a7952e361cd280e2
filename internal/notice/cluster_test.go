package notice_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/notice"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A Cluster node ends the sharded subscriptions of a slot it no longer
// serves, after a failover or a slot's move; the hub wakes the channel's
// waiters, so that they look for themselves, subscribes again where the
// slot is served now, and notices published there reach the waiters.
func TestSubscriptionFollowsItsSlot(t *testing.T) {
	c := redistest.OwnCluster(t)
	for _, change := range []string{"failover", "move slot"} {
		t.Run(change, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			client := c.Client(t)
			s := notice.NewRegistry().Site(client)
			channel := newChannel()
			w, err := joinReady(ctx, s, channel, "waiter")
			require.NoError(t, err)
			defer w.Leave()

			if change == "failover" {
				c.Failover(t, channel, false)
			} else {
				c.MoveSlot(t, channel, 0)
			}
			require.NoError(t, awaitWake(w, 10*time.Second), "the end of the subscription wakes the waiter")
			// A notice sent before the new subscription is confirmed is
			// lost, as notices are hints: send until one arrives.
			payload := "waiter:" + randomHex()
			require.Eventually(t, func() bool {
				if err := publish(ctx, client, channel, payload); err != nil {
					return false
				}
				last, _ := w.Last()
				return last == payload
			}, 20*time.Second, 50*time.Millisecond, "a notice published after the change arrives")
		})
	}
}
