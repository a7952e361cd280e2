package recent_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/classic"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/recent"
)

// classicAdd is the classic recent-list script, ZADD, ZCARD and
// ZREMRANGEBYRANK, scored with the client's clock in whole seconds.
var classicAdd = redis.NewScript(classic.Recent)

// A list written by the classic script at a Key is not the List's: a
// List of that Key reads none of it and leaves it be. Renamed to the
// List's key, as the package doc says (one RENAME, in the same hash slot),
// it is read by Items, each item at the second it was scored with, in
// that script's order (items of one second by their text); the List then
// takes it over: its Adds go in front, re-adding a classic item moves it
// there, its first Add trims the list to Max; and the classic script,
// pointed at the new key, still writes there, each item below every item
// a List added (a List scores microseconds, far above any count of
// seconds) and above the classic items of earlier seconds.
func TestClassicListRenamedIsReadAndTakenOver(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		oldKey := b.Key(t, "recent-test:")
		now := b.Now().Truncate(time.Second)
		sec := now.Unix()
		for _, add := range []struct {
			member string
			at     int64
		}{{"p1", sec - 3}, {"p2", sec - 2}, {"zz", sec - 1}, {"aa", sec - 1}, {"p5", sec}} {
			require.NoError(t, classicAdd.Run(ctx, b.Client, []string{oldKey}, add.member, add.at, 5).Err())
		}

		l := newListOn(t, b.Client, recent.Config{Key: oldKey, Max: 4, MaxAge: time.Hour})
		assert.Empty(t, values(t, l), "the classic list at the Key itself is not the List's")
		n, err := l.Remove(ctx, "p1", "p5")
		require.NoError(t, err)
		assert.Zero(t, n)
		assert.Equal(t, int64(5), b.Client.ZCard(ctx, oldKey).Val(), "and is left as it was")

		key := "{" + oldKey + "}/recent"
		require.Equal(t, key, recent.DataKey(l), "the key the package doc names")
		require.NoError(t, b.Client.Rename(ctx, oldKey, key).Err())
		items, err := l.Items(ctx, 0, 10)
		require.NoError(t, err)
		var got []string
		for i, it := range items {
			got = append(got, it.Value)
			assert.Equal(t, sec-map[string]int64{"p5": 0, "zz": 1, "aa": 1, "p2": 2}[it.Value], it.At.Unix(), "item %d", i)
			assert.Zero(t, it.At.Nanosecond(), "item %d: a whole second", i)
		}
		assert.Equal(t, []string{"p5", "zz", "aa", "p2"}, got, "the classic script's order, at most Max")
		n, err = l.Len(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(4), n, "Len counts at most Max")

		require.NoError(t, l.Add(ctx, "new"))
		assert.Equal(t, []string{"new", "p5", "zz", "aa"}, values(t, l))
		assert.Equal(t, int64(4), b.Client.ZCard(ctx, key).Val(), "trimmed to Max")
		require.NoError(t, l.Add(ctx, "aa"))
		assert.Equal(t, []string{"aa", "new", "p5", "zz"}, values(t, l), "a classic item re-added moves to the front")

		// The classic writer, a second later, goes below the List's items,
		// above the older classic ones, and is read at its second.
		b.Advance(time.Second)
		later := b.Now().Unix()
		require.NoError(t, classicAdd.Run(ctx, b.Client, []string{key}, "classic-late", later+1, 5).Err())
		require.NoError(t, l.Add(ctx, "ours"))
		items, err = l.Items(ctx, 0, 10)
		require.NoError(t, err)
		got = nil
		for _, it := range items {
			got = append(got, it.Value)
		}
		assert.Equal(t, []string{"ours", "aa", "new", "classic-late"}, got, "the trim dropped the two oldest classic items")
		assert.Equal(t, later+1, items[3].At.Unix(), "the classic item reads at its second")
		assert.Zero(t, items[3].At.Nanosecond())
	})
}

// A List with MaxAge drops the classic script's items, renamed to its
// key, by the second they were scored with.
func TestClassicItemsAgeOut(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	l := newList(t, b, recent.Config{Max: 5, MaxAge: 5 * time.Second})
	key := recent.DataKey(l)
	sec := redistest.MiniredisStart.Unix()
	require.NoError(t, classicAdd.Run(ctx, b.Client, []string{key}, "old", sec-10, 5).Err())
	require.NoError(t, classicAdd.Run(ctx, b.Client, []string{key}, "young", sec-1, 5).Err())
	assert.Equal(t, []string{"young"}, values(t, l))
	n, err := l.Remove(ctx, "old", "young")
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "the aged-out item does not count")
	assert.Zero(t, b.Client.Exists(ctx, key).Val(), "an emptied list leaves no key")
}
