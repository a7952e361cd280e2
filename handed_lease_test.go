package slotlimit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// A Lease handed units by a release knows, until its claim lands, only
// the deadline the hand-off gave them, the claim time from the release:
// if they lapse unclaimed (the claim is held up here), its Release
// reports that it held nothing, and does not take the lapse for its own
// release by the deadline the claim would have set.
func TestHandedLeaseKnowsOnlyTheHandOffsDeadlineUntilClaimed(t *testing.T) {
	b := newMiniredis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := testKey(t, b)
	holder := newLimiter(t, b, key, 1, time.Minute)
	client := newClient(t, b)
	claims := make(chan struct{})
	var released atomic.Bool
	client.AddHook(hook(func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		switch op := scriptOp(cmd); {
		case op == "claim":
			<-claims
		case op == "acquire" && released.Load():
			// The waiter's own tries wait too, so that it returns on the
			// notice alone, and not by a try that finds the handed units
			// and takes them for its full lease time.
			<-claims
		}
		return next(ctx, cmd)
	}))
	waiter := newLimiterOn(t, client, slotlimit.Config{Key: key, Limit: 1, TTL: time.Hour})

	_, err := holder.TryAcquire(ctx, "holder")
	require.NoError(t, err)
	got := make(chan *slotlimit.Lease, 1)
	go func() {
		lease, err := waiter.AcquireLease(ctx, 1)
		assert.NoError(t, err)
		got <- lease
	}()
	awaitQueued(t, b, key, 1)
	awaitSubscribed(t, b, key)
	released.Store(true)
	err = holder.Release(ctx, "holder")
	require.NoError(t, err)
	lease := <-got
	require.NotNil(t, lease)

	b.Advance(4 * time.Second) // past the claim time: the handed units lapse
	err = lease.Release(ctx)
	require.ErrorIs(t, err, slotlimit.ErrNotHeld, "the lease had lapsed unclaimed")
	close(claims)
}
