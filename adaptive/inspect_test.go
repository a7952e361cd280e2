package adaptive_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// Inspect reads the limit beside the slots in use, their holders and the
// waiters, and when the limit last moved, all on the server's clock;
// Limit reads the limit alone. Neither writes: a new key reads as
// Initial, not stored.
func TestInspectReadsLimitBesideSlots(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 10, Initial: 3, TTL: time.Minute, Window: time.Millisecond})
		info, err := l.Inspect(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(3), info.Limit)
		assert.False(t, info.Stored, "a new key holds no limit")
		assert.Zero(t, info.InUse)
		keys, _ := adaptive.Keys(key)
		assert.Zero(t, b.Client.Exists(ctx, keys...).Val(), "Inspect and Limit write nothing")
		assert.Equal(t, int64(3), limitOf(t, l))

		slots := take(t, l, 3)
		require.NoError(t, slots[0].Success(ctx)) // 3 of 3: up to 4
		b.Advance(10 * time.Millisecond)
		require.NoError(t, slots[1].Dropped(ctx)) // down to 3
		info, err = l.Inspect(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(3), info.Limit)
		assert.True(t, info.Stored)
		assert.Equal(t, int64(1), info.InUse)
		require.Len(t, info.Holders, 1)
		assert.Equal(t, slots[2].ID(), info.Holders[0].ID)
		left := info.Holders[0].ExpiresAt.Sub(info.ServerTime)
		assert.True(t, left > 50*time.Second && left <= time.Minute, "%v left on a lease of a minute", left)
		assert.False(t, info.LastIncrease.IsZero())
		assert.False(t, info.LastDecrease.Before(info.LastIncrease), "the decrease came last")
		assert.False(t, info.LastDecrease.After(info.ServerTime))
		assert.Zero(t, info.Waiters)
		require.NoError(t, slots[2].Ignore(ctx))
	})
}
