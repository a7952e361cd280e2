package adaptive_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// Every write takes effect once, however often go-redis sends it: each
// test loses one reply after the server ran the call, so that go-redis,
// with its default retries, sends it again, and checks that the effect
// and the answer are those of one call.

// A Dropped or a Success whose reply is lost, sent again, frees its slot
// once and moves the limit once, and answers as its first run did.
func TestReleaseResentMovesLimitOnce(t *testing.T) {
	redistest.EachCutBackend(t, adaptive.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		plain, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 100, Initial: 10, Window: 20 * time.Millisecond})
		l := newLimiterOn(t, client, plain.Config())
		slots := take(t, l, 10)
		leases, _ := adaptive.Keys(key)

		cutter.Arm(1, "evalsha", leases[1])
		require.NoError(t, slots[0].Dropped(ctx), "the call sent again finds its slot freed before its deadline")
		cutter.RequireOneMore(t, 0)
		assert.Equal(t, int64(9), limitOf(t, plain), "10 × 0.9, once")
		assert.Equal(t, int64(9), inUse(t, plain), "one slot freed")

		time.Sleep(130 * time.Millisecond) // past 5 windows, which hold the limit after a decrease
		cutter.Arm(1, "evalsha", leases[1])
		require.NoError(t, slots[1].Success(ctx))
		cutter.RequireOneMore(t, 1)
		assert.Equal(t, int64(10), limitOf(t, plain), "9 of 9 in use: + 1, once")
		assert.Equal(t, int64(8), inUse(t, plain), "one slot freed")

		assert.ErrorIs(t, slots[1].Success(ctx), adaptive.ErrNotHeld, "a second outcome counts nothing")
		for _, s := range slots[2:] {
			require.NoError(t, s.Ignore(ctx))
		}
	})
}

// A TryAcquire whose reply is lost, sent again, holds the one slot its
// first run took.
func TestTryAcquireResentHoldsOnce(t *testing.T) {
	redistest.EachCutBackend(t, adaptive.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		plain, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 2})
		l := newLimiterOn(t, client, plain.Config())
		keys, _ := adaptive.Keys(key)
		cutter.Arm(1, "evalsha", keys[1])
		s, err := l.TryAcquire(ctx)
		cutter.RequireOneMore(t, 0)
		require.NoError(t, err)
		assert.Equal(t, int64(1), inUse(t, plain), "one slot held")
		require.NoError(t, s.Success(ctx))
		assert.Zero(t, inUse(t, plain))
	})
}

// A release whose reply is lost for good matches ErrOutcomeUnknown; the
// same call made again then frees nothing more and counts nothing more.
func TestReleaseCalledAgainAfterUnknownOutcome(t *testing.T) {
	redistest.EachCutBackend(t, adaptive.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		plain, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 100, Initial: 10, Window: time.Minute})
		l := newLimiterOn(t, client, plain.Config())
		slots := take(t, l, 3)
		keys, _ := adaptive.Keys(key)
		cutter.Arm(10, "evalsha", keys[1])
		err := slots[0].Dropped(ctx)
		require.ErrorIs(t, err, adaptive.ErrOutcomeUnknown)
		cutter.Arm(0)
		require.NoError(t, slots[0].Dropped(ctx), "freed before its deadline by the first call")
		assert.Equal(t, int64(9), limitOf(t, plain), "moved once")
		assert.Equal(t, int64(2), inUse(t, plain))
		for _, s := range slots[1:] {
			require.NoError(t, s.Ignore(ctx))
		}
	})
}

// A TryAcquire whose reply is lost for good matches ErrOutcomeUnknown and
// frees what its runs may have taken, so that it holds nothing.
func TestTryAcquireUnknownOutcomeHoldsNothing(t *testing.T) {
	redistest.EachCutBackend(t, adaptive.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		plain, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 2})
		l := newLimiterOn(t, client, plain.Config())
		keys, _ := adaptive.Keys(key)
		cutter.Arm(4, "evalsha", keys[1]) // the first send and go-redis's 3 retries
		s, err := l.TryAcquire(ctx)
		require.ErrorIs(t, err, adaptive.ErrOutcomeUnknown)
		assert.Nil(t, s)
		assert.False(t, cutter.Armed(), "the release behind it got through")
		assert.Zero(t, inUse(t, plain), "nothing is held")
		assert.Equal(t, int64(2), limitOf(t, plain), "and nothing counted")
	})
}
