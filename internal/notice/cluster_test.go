package notice_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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

// A client whose slot map is stale sends its SSUBSCRIBE to a node that no
// longer serves the channel's slot, which answers MOVED and subscribes
// nothing. The hub opens the subscription again, on the slot's master,
// once the client's map is right, instead of keeping a subscription that
// never hears a notice.
func TestSubscriptionSentToTheWrongNode(t *testing.T) {
	c := redistest.OwnCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	channel := newChannel()
	slot := c.Slot(t, channel)

	probe := c.Client(t)
	//lint:ignore SA1019 ClusterOptions.ClusterSlots takes a map of this shape
	truth, err := probe.ClusterSlots(ctx).Result()
	require.NoError(t, err)
	var wrong []redis.ClusterNode // the nodes of another master's range
	for _, r := range truth {
		if !(r.Start <= slot && slot <= r.End) {
			wrong = r.Nodes
			break
		}
	}
	require.NotEmpty(t, wrong, "a master that does not serve slot %d", slot)
	stale := make([]redis.ClusterSlot, len(truth))
	for i, r := range truth {
		stale[i] = r
		if r.Start <= slot && slot <= r.End {
			stale[i].Nodes = wrong
		}
	}
	var fresh atomic.Bool
	client := c.Client(t, func(o *redis.ClusterOptions) {
		o.ClusterSlots = func(context.Context) ([]redis.ClusterSlot, error) {
			if fresh.Load() {
				return truth, nil
			}
			return stale, nil
		}
	})

	w := notice.NewRegistry().Site(client).Join(channel, "waiter", parse)
	defer w.Leave()
	w.Expect(everyNotice)

	// Wait until the wrong node has refused the SSUBSCRIBE, then let the
	// client's map be right.
	wrongNode := redis.NewClient(&redis.Options{Addr: wrong[0].Addr})
	defer wrongNode.Close()
	require.Eventually(t, func() bool {
		list, err := wrongNode.ClientList(ctx).Result()
		return err == nil && strings.Contains(list, "cmd=ssubscribe")
	}, 20*time.Second, 10*time.Millisecond, "the SSUBSCRIBE reaches the wrong node")
	require.False(t, w.Ready(), "a refused subscription is not ready")
	fresh.Store(true)

	require.Eventually(t, w.Ready, 30*time.Second, 10*time.Millisecond, "the subscription is opened again on the slot's master")
	payload := "waiter:" + randomHex()
	require.NoError(t, publish(ctx, client, channel, payload))
	require.NoError(t, arrived(ctx, w, payload))
}
