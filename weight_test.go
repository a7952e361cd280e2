package slotlimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

func holderWeights(t *testing.T, l *slotlimit.Limiter) map[string]int64 {
	t.Helper()
	hs, err := l.Holders(context.Background())
	require.NoError(t, err)
	weights := map[string]int64{}
	for _, h := range hs {
		weights[h.ID] = h.Weight
	}
	return weights
}

func TestWeightedLeases(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		l := newLimiter(t, b, testKey(t, b), 5, time.Minute)

		steps := []struct {
			holder   string
			n        int64
			acquired bool
			count    int64 // units in use after the call
			weight   int64 // units the caller holds after the call
		}{
			{"big", 3, true, 3, 3},
			{"other", 3, false, 3, 0}, // 3 + 3 > 5
			{"small", 2, true, 5, 2},  // the last two units
			{"one", 1, false, 5, 0},
			{"big", 3, true, 5, 3},   // renews, no double count
			{"big", 4, false, 5, 3},  // growing needs a free unit: refused, keeps 3
			{"big", 1, true, 3, 1},   // shrinking always fits and frees 2
			{"big", 3, true, 5, 3},   // and growing back fits again
			{"small", 1, true, 4, 1}, // frees one unit
			{"one", 1, true, 5, 1},
		}
		for i, s := range steps {
			res, err := l.TryAcquireN(ctx, s.holder, s.n)
			require.NoError(t, err, "step %d", i)
			assert.Equal(t, s.acquired, res.Acquired, "step %d", i)
			assert.Equal(t, s.count, res.Count, "step %d", i)
			assert.Equal(t, s.weight, res.Weight, "step %d", i)
		}
		assert.Equal(t, map[string]int64{"big": 3, "small": 1, "one": 1}, holderWeights(t, l))
		n, err := l.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(5), n)

		err = l.Release(ctx, "big")
		require.NoError(t, err)
		err = l.Release(ctx, "big")
		require.ErrorIs(t, err, slotlimit.ErrNotHeld, "a second release frees nothing more")
		n, err = l.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), n, "the release freed all 3 units")
	})
}

func TestWeightOutOfRangeFailsAtOnce(t *testing.T) {
	b := newMiniredis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	key := testKey(t, b)
	l := newLimiter(t, b, key, 3, time.Minute)
	for _, n := range []int64{0, -1, 4} {
		_, err := l.TryAcquireN(ctx, "d1", n)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidWeight, "n=%d", n)
		_, err = l.AcquireN(ctx, "d1", n)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidWeight, "n=%d: an error, not a wait", n)
		_, err = l.AcquireLease(ctx, n)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidWeight, "n=%d", n)
	}
	assert.NoError(t, ctx.Err(), "nothing waited")
	n, err := b.Client.Exists(ctx, key).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "nothing was written")
}

func TestWeightedLeaseLapsesWithAllItsUnits(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		l := newLimiter(t, b, key, 4, leaseTTL)
		_, err := l.TryAcquireN(ctx, "crashed", 3)
		require.NoError(t, err)
		b.Advance(leaseTTL / 2)
		_, err = l.TryAcquire(ctx, "alive")
		require.NoError(t, err)

		b.Advance(leaseTTL/2 + leaseTTL/6) // crashed lapsed, alive not
		n, err := l.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n)
		res, err := l.TryAcquireN(ctx, "next", 3)
		require.NoError(t, err)
		assert.True(t, res.Acquired, "all 3 lapsed units are free again")
		assert.Equal(t, int64(4), res.Count)

		b.Advance(2 * leaseTTL) // everything lapsed: no key is left
		assert.Empty(t, storedKeys(t, b, key, 4))
	})
}

func TestAcquireNWaitsForEnoughUnits(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		l := newLimiter(t, b, testKey(t, b), 3, time.Minute)
		_, err := l.TryAcquireN(ctx, "a", 2)
		require.NoError(t, err)

		done := acquireAsync(ctx, l, "b", 2)
		time.Sleep(150 * time.Millisecond)
		_, err = l.TryAcquire(ctx, "c") // takes the one free unit; b still waits
		require.NoError(t, err)
		select {
		case <-done:
			t.Fatal("b got 2 units while only 1 was free")
		case <-time.After(150 * time.Millisecond):
		}
		err = l.Release(ctx, "a")
		require.NoError(t, err)
		requireDone(t, done, 2*time.Second, "b after a's 2 units were freed")
		assert.Equal(t, map[string]int64{"b": 2, "c": 1}, holderWeights(t, l))
	})
}

// Weights up to MaxLimit round-trip exactly; Redis prints a Lua number with
// 14 digits, so the scripts must not let it.
func TestHugeWeightsRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		l := newLimiter(t, b, testKey(t, b), slotlimit.MaxLimit, time.Minute)
		const big = 123456789012345
		res, err := l.TryAcquireN(ctx, "big", big)
		require.NoError(t, err)
		assert.Equal(t, int64(big), res.Weight)
		res, err = l.TryAcquireN(ctx, "rest", slotlimit.MaxLimit-big)
		require.NoError(t, err)
		assert.True(t, res.Acquired)
		assert.Equal(t, int64(slotlimit.MaxLimit), res.Count)
		assert.Equal(t, map[string]int64{"big": big, "rest": slotlimit.MaxLimit - big}, holderWeights(t, l))
		n, err := l.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(slotlimit.MaxLimit), n)

		_, err = slotlimit.New(b.Client, slotlimit.Config{Key: "k", Limit: slotlimit.MaxLimit + 1})
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig)
	})
}
