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

// classicAdd is the classic recent-list script, ZADD, ZCARD and
// ZREMRANGEBYRANK, scored with the client's clock in whole seconds.
var classicAdd = redis.NewScript("local key = KEYS[1] " +
	"local member = ARGV[1] " +
	"local score = ARGV[2] " +
	"local maxSize = tonumber(ARGV[3]) " +
	"redis.call('ZADD', key, score, member) " +
	"local size = redis.call('ZCARD', key) " +
	"if size > maxSize then " +
	"    redis.call('ZREMRANGEBYRANK', key, 0, size - maxSize - 1) " +
	"end " +
	"return 1")

// A list written by the classic script is read by Items, each item at the
// second it was scored with, in that script's order (items of one second
// by their text); a List then takes it over: its Adds go in front,
// re-adding a classic item moves it there, its first Add trims the list
// to Max, and MaxAge ages that script's items out by their second.
func TestClassicListReadAndTakenOver(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		key := b.Key(t, "recent-test:")
		now := b.Now().Truncate(time.Second)
		sec := now.Unix()
		for _, add := range []struct {
			member string
			at     int64
		}{{"p1", sec - 3}, {"p2", sec - 2}, {"zz", sec - 1}, {"aa", sec - 1}, {"p5", sec}} {
			require.NoError(t, classicAdd.Run(ctx, b.Client, []string{key}, add.member, add.at, 5).Err())
		}

		l := newListOn(t, b.Client, recent.Config{Key: key, Max: 4, MaxAge: time.Hour})
		items, err := l.Items(ctx, 0, 10)
		require.NoError(t, err)
		var got []string
		for i, it := range items {
			got = append(got, it.Value)
			assert.Equal(t, sec-map[string]int64{"p5": 0, "zz": 1, "aa": 1, "p2": 2}[it.Value], it.At.Unix(), "item %d", i)
			assert.Zero(t, it.At.Nanosecond(), "item %d: a whole second", i)
		}
		assert.Equal(t, []string{"p5", "zz", "aa", "p2"}, got, "the classic script's order, at most Max")
		n, err := l.Len(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(4), n, "Len counts at most Max")

		require.NoError(t, l.Add(ctx, "new"))
		assert.Equal(t, []string{"new", "p5", "zz", "aa"}, values(t, l))
		assert.Equal(t, int64(4), b.Client.ZCard(ctx, key).Val(), "trimmed to Max")
		require.NoError(t, l.Add(ctx, "aa"))
		assert.Equal(t, []string{"aa", "new", "p5", "zz"}, values(t, l), "a classic item re-added moves to the front")

		// The classic writer, a second later, still fits in by its second.
		b.Advance(time.Second)
		later := b.Now().Unix()
		require.NoError(t, classicAdd.Run(ctx, b.Client, []string{key}, "classic-late", later+1, 5).Err())
		require.NoError(t, l.Add(ctx, "ours"))
		got = values(t, l)
		assert.Equal(t, "ours", got[0], "our Add goes after every item there")
		assert.Contains(t, got, "classic-late")
	})
}

// A List with MaxAge drops the classic script's items by the second they
// were scored with.
func TestClassicItemsAgeOut(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	key := b.Key(t, "recent-test:")
	sec := redistest.MiniredisStart.Unix()
	require.NoError(t, classicAdd.Run(ctx, b.Client, []string{key}, "old", sec-10, 5).Err())
	require.NoError(t, classicAdd.Run(ctx, b.Client, []string{key}, "young", sec-1, 5).Err())
	l := newListOn(t, b.Client, recent.Config{Key: key, Max: 5, MaxAge: 5 * time.Second})
	assert.Equal(t, []string{"young"}, values(t, l))
	n, err := l.Remove(ctx, "old", "young")
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "the aged-out item does not count")
	assert.Zero(t, b.Client.Exists(ctx, key).Val(), "an emptied list leaves no key")
}
