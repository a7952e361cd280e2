package recent_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/recent"
)

// A server clock that steps back keeps the order of arrival: the Adds
// after it take the microseconds after the newest item, and At runs
// ahead of the clock by as much.
func TestClockStepsBack(t *testing.T) {
	b := redistest.Miniredis(t)
	l := newList(t, b, recent.Config{Max: 10})
	ctx := context.Background()
	require.NoError(t, l.Add(ctx, "z"))
	b.Advance(-time.Second)
	require.NoError(t, l.Add(ctx, "b", "a"))
	items, err := l.Items(ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, items, 3)
	for i, want := range []string{"a", "b", "z"} {
		assert.Equal(t, want, items[i].Value, "item %d", i)
		assert.WithinDuration(t, redistest.MiniredisStart.Add(time.Duration(2-i)*time.Microsecond), items[i].At, 0, "item %d", i)
	}
}

// secondsScore is the score this package gave, before it scored
// microseconds, to an item added at ms: seconds, with a binary fraction
// of 2048 ticks a millisecond.
func secondsScore(ms int64) float64 {
	return float64(ms/1000) + float64(ms%1000)*2048/(1<<21)
}

// Items scored in seconds, as this package wrote them before it scored
// microseconds, or as a classic script writes them, read and age out
// beside the microsecond scores of later Adds: below them, at their own
// millisecond or second, pages running from one range into the other,
// Len counting both, and an Add or Remove pruning what is older than
// MaxAge in each.
func TestSecondsScoresBesideMicroseconds(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, recent.Config{Max: 10, MaxAge: time.Hour})
		key := recent.DataKey(l)
		now := b.Now().Truncate(time.Millisecond)
		fracAt := now.Add(-2*time.Second - 123*time.Millisecond)
		wholeAt := now.Add(-3 * time.Second).Truncate(time.Second)
		require.NoError(t, b.Client.ZAdd(ctx, key,
			redis.Z{Score: secondsScore(fracAt.UnixMilli()), Member: "fraction"},
			redis.Z{Score: float64(wholeAt.Unix()), Member: "whole"},
			redis.Z{Score: secondsScore(now.Add(-2 * time.Hour).UnixMilli()), Member: "seconds-aged"},
			redis.Z{Score: float64(now.Add(-2 * time.Hour).UnixMicro()), Member: "micro-aged"},
		).Err())
		require.NoError(t, l.Add(ctx, "n1", "n2"))

		all := []string{"n2", "n1", "fraction", "whole"}
		assert.Equal(t, all, values(t, l))
		for _, aged := range []string{"seconds-aged", "micro-aged"} {
			assert.Equal(t, redis.Nil, b.Client.ZScore(ctx, key, aged).Err(), "the Add pruned %s", aged)
		}
		n, err := l.Len(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(4), n, "Len counts both ranges")
		for offset := range int64(5) {
			for count := int64(1); count <= 5; count++ {
				items, err := l.Items(ctx, offset, count)
				require.NoError(t, err)
				var got []string
				for _, it := range items {
					got = append(got, it.Value)
				}
				want := all[min(offset, 4):min(offset+count, 4)]
				if len(want) == 0 {
					want = nil
				}
				assert.Equal(t, want, got, "offset %d, count %d", offset, count)
			}
		}
		items, err := l.Items(ctx, 2, 2)
		require.NoError(t, err)
		require.Len(t, items, 2)
		assert.WithinDuration(t, fracAt, items[0].At, 0, "read at its millisecond")
		assert.WithinDuration(t, wholeAt, items[1].At, 0, "read at its second")

		// Without MaxAge, one range holds both, in the same order.
		plain := newListOn(t, b.Client, recent.Config{Key: l.Config().Key, Max: 10})
		assert.Equal(t, all, values(t, plain))

		// A Remove prunes both ranges too.
		require.NoError(t, b.Client.ZAdd(ctx, key,
			redis.Z{Score: secondsScore(now.Add(-2 * time.Hour).UnixMilli()), Member: "seconds-aged"},
			redis.Z{Score: float64(now.Add(-2 * time.Hour).UnixMicro()), Member: "micro-aged"},
		).Err())
		removed, err := l.Remove(ctx, "n1", "seconds-aged", "micro-aged")
		require.NoError(t, err)
		assert.Equal(t, int64(1), removed, "the aged items do not count")
		assert.Equal(t, []string{"n2", "fraction", "whole"}, values(t, l))
		assert.Equal(t, int64(3), b.Client.ZCard(ctx, key).Val())
	})
}
