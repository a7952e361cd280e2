package slotlimit_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// The commonest grant, a new lease of one unit, comes back as one number
// that holds the units in use and the lease's deadline while the units
// stay below 2048 (see scripts/acquire.lua), and as a list from there on:
// both read as the same Result.
func TestCommonestGrantReplyOnBothSidesOfItsBound(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		key := testKey(t, b)
		const ttl = time.Minute
		l := newLimiterOn(t, b.Client, slotlimit.Config{Key: key, Limit: 3000, TTL: ttl})

		// 2046 leases that run for ten minutes more, so that the next
		// grant brings the units in use to 2047, the last that fits.
		now, err := b.Client.Time(ctx).Result()
		require.NoError(t, err)
		held := make([]redis.Z, 2046)
		for i := range held {
			held[i] = redis.Z{Score: float64(now.Add(10 * time.Minute).UnixMilli()), Member: "held-" + strconv.Itoa(i)}
		}
		require.NoError(t, b.Client.ZAdd(ctx, key, held...).Err())

		grant := func(holder string, count int64) slotlimit.Result {
			t.Helper()
			before, err := b.Client.Time(ctx).Result()
			require.NoError(t, err)
			res, err := l.TryAcquire(ctx, holder)
			require.NoError(t, err)
			after, err := b.Client.Time(ctx).Result()
			require.NoError(t, err)
			assert.True(t, res.Acquired, holder)
			assert.Equal(t, count, res.Count, holder)
			assert.Equal(t, int64(1), res.Weight, holder)
			assert.Equal(t, int64(3000), res.Limit, holder)
			lo, hi := before.Add(ttl).UnixMilli(), after.Add(ttl).UnixMilli()
			assert.True(t, res.ExpiresAt.UnixMilli() >= lo && res.ExpiresAt.UnixMilli() <= hi,
				"%s: ExpiresAt %d, want %d to %d", holder, res.ExpiresAt.UnixMilli(), lo, hi)
			deadline, err := b.Client.ZScore(ctx, key, holder).Result()
			require.NoError(t, err)
			assert.Equal(t, int64(deadline), res.ExpiresAt.UnixMilli(), holder)
			return res
		}
		first := grant("a", 2047) // one number
		grant("b", 2048)          // a list
		again := grant("a", 2048) // a renewal, a list
		assert.False(t, again.ExpiresAt.Before(first.ExpiresAt))
	})
}
