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

// A batch gives exactly what the same calls one by one give, in order:
// the same script runs for each holder on two keys in the same state.
func TestBatchMatchesCallsOneByOne(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		batched := newLimiter(t, b, testKey(t, b), 5, time.Minute)
		single := newLimiter(t, b, testKey(t, b), 5, time.Minute)
		for _, l := range []*slotlimit.Limiter{batched, single} {
			_, err := l.TryAcquire(ctx, "early") // the same starting state
			require.NoError(t, err)
		}
		holders := []string{"d1", "d2", "early", "d2", "d3", "d4", "d5", "d6"}
		got, err := batched.TryAcquireBatch(ctx, holders)
		require.NoError(t, err)
		require.Len(t, got, len(holders))
		for i, h := range holders {
			want, err := single.TryAcquire(ctx, h)
			require.NoError(t, err)
			assert.Equal(t, want.Acquired, got[i].Acquired, "%d %s", i, h)
			assert.Equal(t, want.Count, got[i].Count, "%d %s", i, h)
			assert.Equal(t, want.Weight, got[i].Weight, "%d %s", i, h)
			assert.Equal(t, want.RetryAfter > 0, got[i].RetryAfter > 0, "%d %s", i, h)
			assert.Equal(t, want.ExpiresAt.IsZero(), got[i].ExpiresAt.IsZero(), "%d %s", i, h)
		}
		assert.ElementsMatch(t, holderIDs(t, single), holderIDs(t, batched))

		releases := []string{"d1", "d1", "nobody", "early"}
		freed, err := batched.ReleaseBatch(ctx, releases)
		require.NoError(t, err)
		for i, h := range releases {
			want, err := single.Release(ctx, h)
			require.NoError(t, err)
			assert.Equal(t, want, freed[i], "%d %s", i, h)
		}
		assert.ElementsMatch(t, holderIDs(t, single), holderIDs(t, batched))
	})
}

func TestBatchRejectsInvalidHolderAndTouchesNothing(t *testing.T) {
	b := newMiniredis(t)
	ctx := context.Background()
	key := testKey(t, b)
	l := newLimiter(t, b, key, 5, time.Minute)
	_, err := l.TryAcquireBatch(ctx, []string{"d1", "", "d2"})
	assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder)
	_, err = l.ReleaseBatch(ctx, []string{"d1", string(make([]byte, slotlimit.MaxHolderLen+1))})
	assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder)
	assert.Empty(t, storedKeys(t, b, key, 5))
	res, err := l.TryAcquireBatch(ctx, nil)
	assert.NoError(t, err)
	assert.Empty(t, res)
}

// A batch survives a flushed script cache, and a SCRIPT FLUSH between two
// batches runs no call twice.
func TestBatchAfterScriptFlush(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		l := newLimiter(t, b, testKey(t, b), 50, time.Minute)
		holders := make([]string, 40)
		for i := range holders {
			holders[i] = fmt.Sprintf("d%d", i)
		}
		require.NoError(t, b.client.ScriptFlush(ctx).Err())
		got, err := l.TryAcquireBatch(ctx, holders)
		require.NoError(t, err)
		for i, res := range got {
			assert.True(t, res.Acquired)
			assert.Equal(t, int64(i+1), res.Count, "each call ran once, in order")
		}
		require.NoError(t, b.client.ScriptFlush(ctx).Err())
		freed, err := l.ReleaseBatch(ctx, holders)
		require.NoError(t, err)
		for i, ok := range freed {
			assert.True(t, ok, "release %d ran once and freed a live lease", i)
		}
	})
}
