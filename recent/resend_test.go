package recent_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/recent"
)

// The promise: every write may be sent again. go-redis, with its default
// MaxRetries, re-sends a script whose reply was lost after the server ran
// it; these tests lose one reply, so that the server runs the call twice
// while the caller sees one call.

// A re-sent Add leaves the list as one Add would, its values newest and
// in their order, the list capped at Max and its TTL set; the caller sees
// no error.
func TestResentAddAddsOnce(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l, cutter := cutList(t, b, recent.Config{Max: 3, TTL: time.Minute})
		key := recent.DataKey(l)
		require.NoError(t, l.Add(ctx, "z", "a"))
		b.Advance(time.Millisecond)

		cutter.Arm(1, "evalsha", key)
		require.NoError(t, l.Add(ctx, "b", "c"))
		assert.Equal(t, 1, cutter.Cuts(), "a reply was lost and the Add sent again")
		assert.Equal(t, []string{"c", "b", "a"}, values(t, l))
		assert.Equal(t, int64(3), b.Client.ZCard(ctx, key).Val(), "no more than Max, no value twice")
		assert.Positive(t, b.Client.PTTL(ctx, key).Val(), "the TTL is set")
	})
}

// What the doc says of a re-sent Add: it is a second Add, so its values
// go in front of an item added between the two runs, with the time of the
// second run. The list still holds at most Max items.
func TestResentAddIsASecondAdd(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		key := b.Key(t, "recent-test:")
		other := newListOn(t, b.Client, recent.Config{Key: key, Max: 3})

		// Between the first run and the re-send, before the client reads
		// that the reply was lost, another writer adds x.
		var between atomic.Bool
		var betweenErr error
		var secondRunAfter time.Time
		l, cutter := cutList(t, b, recent.Config{Key: key, Max: 3})
		cutter.Then(func() {
			b.Advance(time.Millisecond)
			betweenErr = other.Add(ctx, "x")
			b.Advance(time.Millisecond)
			secondRunAfter = b.Now()
			between.Store(true)
		})
		require.NoError(t, l.Add(ctx, "a"))
		cutter.Arm(1, "evalsha", key)
		require.NoError(t, l.Add(ctx, "b", "c"))
		require.True(t, between.Load(), "x was added between the two runs")
		require.NoError(t, betweenErr)

		items, err := l.Items(ctx, 0, 10)
		require.NoError(t, err)
		var got []string
		for _, it := range items {
			got = append(got, it.Value)
		}
		assert.Equal(t, []string{"c", "b", "x"}, got, "the second run put b and c in front of x; a dropped beyond Max")
		assert.False(t, items[1].At.Before(secondRunAfter.Truncate(time.Millisecond)), "b has the second run's time")
		assert.Equal(t, int64(3), b.Client.ZCard(ctx, recent.DataKey(l)).Val())
	})
}

// A re-sent Remove leaves the list as one Remove would, and, as its doc
// says, counts only what the second run found: 0 for values the first run
// removed, fewer than were removed, never more.
func TestResentRemoveRemovesOnceAndCountsLow(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l, cutter := cutList(t, b, recent.Config{Max: 5, TTL: time.Minute})
		key := recent.DataKey(l)
		require.NoError(t, l.Add(ctx, "a", "b", "c"))

		cutter.Arm(1, "evalsha", key)
		n, err := l.Remove(ctx, "a", "b", "absent")
		require.NoError(t, err)
		assert.Equal(t, 1, cutter.Cuts(), "a reply was lost and the Remove sent again")
		assert.Equal(t, int64(0), n, "the second run's count: the first run removed a and b")
		assert.Equal(t, []string{"c"}, values(t, l))

		cutter.Arm(1, "evalsha", key)
		n, err = l.Remove(ctx, "c")
		require.NoError(t, err)
		assert.Zero(t, n)
		assert.Zero(t, b.Client.Exists(ctx, key).Val(), "the emptied list left no key")
	})
}

// A reply lost on every try leaves the outcome unknown; calling again with
// the same values, as the docs say, ends as one call would.
func TestLostReplyThenCallAgain(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l, cutter := cutList(t, b, recent.Config{Max: 3, TTL: time.Minute})
		key := recent.DataKey(l)
		require.NoError(t, l.Add(ctx, "a"))

		cutter.Arm(10, "evalsha", key)
		err := l.Add(ctx, "b", "c")
		assert.ErrorIs(t, err, recent.ErrOutcomeUnknown)
		assert.ErrorIs(t, err, slotlimit.ErrOutcomeUnknown, "one value, shared by every package")
		assertNamesMethodOnce(t, err, "add", "a lost reply")
		cutter.Arm(0)
		require.NoError(t, l.Add(ctx, "b", "c"))
		assert.Equal(t, []string{"c", "b", "a"}, values(t, l))

		cutter.Arm(10, "evalsha", key)
		_, err = l.Remove(ctx, "a", "c")
		assert.ErrorIs(t, err, recent.ErrOutcomeUnknown)
		assertNamesMethodOnce(t, err, "remove", "a lost reply")
		cutter.Arm(0)
		n, err := l.Remove(ctx, "a", "c")
		require.NoError(t, err)
		assert.Zero(t, n, "the lost call removed them")
		assert.Equal(t, []string{"b"}, values(t, l))
		assert.Positive(t, b.Client.PTTL(ctx, key).Val())
	})
}

// cutList returns a List of cfg, on a key of the test's own unless cfg
// names one, through a client of b whose replies cutter can lose, tweaked
// by tweaks. The server has the List's remove script; a test's first Add,
// with no reply lost, gives it the add script, so that a lost reply is
// that of a script that ran, not of a NOSCRIPT answer.
func cutList(t *testing.T, b *redistest.Backend, cfg recent.Config, tweaks ...func(*redis.UniversalOptions)) (*recent.List, *redistest.ReplyCutter) {
	t.Helper()
	if cfg.Key == "" {
		cfg.Key = b.Key(t, "recent-test:")
	}
	client, cutter := b.CutClient(t, tweaks...)
	l := newListOn(t, client, cfg)
	_, err := l.Remove(context.Background(), "never added")
	require.NoError(t, err)
	return l, cutter
}
