package recent_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		client, cutter := b.CutClient(t)
		l := newListOn(t, client, recent.Config{Key: b.Key(t, "recent-test:"), Max: 3, TTL: time.Minute})
		key := l.Config().Key
		require.NoError(t, l.Add(ctx, "z", "a"), "loads the script, so the cut call runs")
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

		// Between the first run and the re-send, go-redis dials a new
		// connection, the cut one being closed: another writer adds x then.
		var cutter *redistest.ReplyCutter
		var between atomic.Bool
		var betweenErr error
		var secondRunAfter time.Time
		client, cutter := b.CutClient(t, func(o *redis.UniversalOptions) {
			dial := o.Dialer
			o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
				if cutter.Cuts() == 1 && between.CompareAndSwap(false, true) {
					b.Advance(time.Millisecond)
					betweenErr = other.Add(ctx, "x")
					b.Advance(time.Millisecond)
					secondRunAfter = b.Now()
				}
				return dial(ctx, network, addr)
			}
		})
		l := newListOn(t, client, recent.Config{Key: key, Max: 3})
		require.NoError(t, l.Add(ctx, "a"), "loads the script, so the cut call runs")
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
		assert.Equal(t, int64(3), b.Client.ZCard(ctx, key).Val())
	})
}

// A re-sent Remove leaves the list as one Remove would, and, as its doc
// says, counts only what the second run found: 0 for values the first run
// removed, fewer than were removed, never more.
func TestResentRemoveRemovesOnceAndCountsLow(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client, cutter := b.CutClient(t)
		l := newListOn(t, client, recent.Config{Key: b.Key(t, "recent-test:"), Max: 5, TTL: time.Minute})
		key := l.Config().Key
		require.NoError(t, l.Add(ctx, "a", "b", "c"))
		n, err := l.Remove(ctx, "nope")
		require.NoError(t, err, "loads the script, so the cut call runs")
		require.Zero(t, n)

		cutter.Arm(1, "evalsha", key)
		n, err = l.Remove(ctx, "a", "b", "absent")
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
		client, cutter := b.CutClient(t)
		l := newListOn(t, client, recent.Config{Key: b.Key(t, "recent-test:"), Max: 3, TTL: time.Minute})
		key := l.Config().Key
		require.NoError(t, l.Add(ctx, "a"))
		_, err := l.Remove(ctx, "nope")
		require.NoError(t, err)

		cutter.Arm(10, "evalsha", key)
		require.Error(t, l.Add(ctx, "b", "c"))
		cutter.Arm(0)
		require.NoError(t, l.Add(ctx, "b", "c"))
		assert.Equal(t, []string{"c", "b", "a"}, values(t, l))

		cutter.Arm(10, "evalsha", key)
		_, err = l.Remove(ctx, "a", "c")
		require.Error(t, err)
		cutter.Arm(0)
		n, err := l.Remove(ctx, "a", "c")
		require.NoError(t, err)
		assert.Zero(t, n, "the lost call removed them")
		assert.Equal(t, []string{"b"}, values(t, l))
		assert.Positive(t, b.Client.PTTL(ctx, key).Val())
	})
}
