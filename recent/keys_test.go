package recent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/recent"
)

// A List and a slotlimit.Limiter given the same Key keep apart: the
// Limiter, which drops lapsed leases from the sorted set at its key,
// never drops the list's items, nor counts them as holders; the List
// never reads the holders, and its Adds and Removes, which trim and
// empty its own sorted set, never drop one.
func TestListAndLimiterOnOneKeyKeepApart(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		key := b.Key(t, "recent-test:")
		l := newListOn(t, b.Client, recent.Config{Key: key, Max: 2, MaxAge: time.Hour})
		// Two Limiters of the key: one with a short lease, to lapse, one
		// with a long one, to stay.
		limiter, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 2, TTL: 200 * time.Millisecond})
		require.NoError(t, err)
		long, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Hour})
		require.NoError(t, err)

		require.NoError(t, l.Add(ctx, "h1", "a", "b"))
		r, err := limiter.TryAcquire(ctx, "h1")
		require.NoError(t, err)
		require.True(t, r.Acquired, "the list's items are no holders")
		assert.Equal(t, int64(1), r.Count)
		assert.Equal(t, []string{"b", "a"}, values(t, l), "the Limiter dropped none of the list's items")

		b.Advance(time.Second) // h1's lease lapses; the items do not age out
		r, err = long.TryAcquire(ctx, "h2")
		require.NoError(t, err)
		require.True(t, r.Acquired)
		assert.Equal(t, int64(1), r.Count, "h1 lapsed")
		assert.Equal(t, []string{"b", "a"}, values(t, l), "the Limiter's sweep of lapsed leases left the items")

		n, err := l.Len(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), n, "Len counts no holder")
		n, err = l.Remove(ctx, "h2", "a", "b")
		require.NoError(t, err)
		assert.Equal(t, int64(2), n, "the holder h2 is no item")
		require.NoError(t, l.Add(ctx, "x", "y", "z"))
		holders, err := long.Holders(ctx)
		require.NoError(t, err)
		require.Len(t, holders, 1, "the List's Remove and trim dropped no holder")
		assert.Equal(t, "h2", holders[0].ID)
		assert.Equal(t, []string{"z", "y"}, values(t, l))
	})
}

// The list's key is Key with "recent" added in Key's hash slot, as
// Config.Key says: inside a hash tag Key has, or with Key as the tag.
func TestListKeyName(t *testing.T) {
	b := redistest.Miniredis(t)
	for key, want := range map[string]string{
		"recent:42":       "{recent:42}/recent",
		"{user:42}:views": "{user:42}:views:recent",
		"{user:42}":       "{user:42}:recent",
		"a{b}c":           "a{b}c:recent",
	} {
		l := newListOn(t, b.Client, recent.Config{Key: key, Max: 1})
		assert.Equal(t, want, recent.DataKey(l), key)
	}
}

// A Key that a package of the module keeps beside another key (a lock's
// queue, a rate limit's time, another list's items) is refused with
// ErrInvalidConfig, so that a List never reads or changes another
// package's data.
func TestNewRefusesAnotherPackagesKey(t *testing.T) {
	b := redistest.Miniredis(t)
	for _, key := range []string{"{recent:42}/recent", "{k}/ratelimit", "{t}:k:lock", "{k}/w"} {
		l, err := recent.New(b.Client, recent.Config{Key: key, Max: 1})
		assert.ErrorIs(t, err, recent.ErrInvalidConfig, key)
		assert.Nil(t, l, key)
	}
}
