package slotlimit_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/observe"
)

// A Lease handed units by a release knows, until its claim lands, only
// the deadline the hand-off gave them, the claim time from the release:
// if they lapse unclaimed (the claim is held up here), its Release
// reports that it held nothing, and does not take the lapse for its own
// release by the deadline the claim would have set.
//
// The waiter must return on the release's notice for this to be tested:
// a periodic try of its own that happens to run first finds the handed
// units and takes them for its full lease time, which its Release then
// rightly frees. So the scenario runs until a waiter returns on the
// notice, which its Observer tells (HandedOver), at most a few times.
func TestHandedLeaseKnowsOnlyTheHandOffsDeadlineUntilClaimed(t *testing.T) {
	for attempt := 1; attempt <= 5; attempt++ {
		if handedLeaseLapsesUnclaimed(t) {
			return
		}
		t.Logf("attempt %d: the waiter's own try took the units before the notice came", attempt)
	}
	t.Fatal("no waiter returned on the notice in 5 attempts")
}

// handedLeaseLapsesUnclaimed runs the scenario once, and reports whether
// the waiter returned on the notice, the case it checks.
func handedLeaseLapsesUnclaimed(t *testing.T) bool {
	b := newMiniredis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := testKey(t, b)
	holder := newLimiter(t, b, key, 1, time.Minute)
	client := newClient(t, b)
	claims := make(chan struct{})
	defer close(claims)
	client.AddHook(hook(func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if scriptOp(cmd) == "claim" {
			select {
			case <-claims:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return next(ctx, cmd)
	}))
	rec := &observetest.Recorder{}
	waiter := newLimiterOn(t, client, slotlimit.Config{Key: key, Limit: 1, TTL: time.Hour, Observer: rec})

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
	err = holder.Release(ctx, "holder")
	require.NoError(t, err)
	lease := <-got
	require.NotNil(t, lease)
	if !slices.Contains(observetest.Kinds(rec.Take()), observe.HandedOver) {
		return false
	}

	b.Advance(4 * time.Second) // past the claim time: the handed units lapse
	err = lease.Release(ctx)
	require.ErrorIs(t, err, slotlimit.ErrNotHeld, "the lease had lapsed unclaimed")
	return true
}
