package delayqueue_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A queue's keys carry the package's name inside the Key's hash tag, a
// Key with a tag keeping it, so that every key of a queue shares one
// hash slot.
func TestKeysCarryThePackageName(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	for key, want := range map[string]string{
		"jobs":          "{jobs}/delayqueue",
		"{jobs}":        "{jobs}:delayqueue",
		"{tenant}:jobs": "{tenant}:jobs:delayqueue",
	} {
		q := newQueueOn(t, b.Client, delayqueue.Config{Key: key})
		_, err := q.Push(ctx, []byte("p"), time.Hour)
		require.NoError(t, err)
		assert.Equal(t, "zset", b.Client.Type(ctx, want).Val(), key)
		assert.Equal(t, "hash", b.Client.Type(ctx, want+":bodies").Val(), key)
		assert.Zero(t, b.Client.Exists(ctx, key).Val(), "%s: nothing is kept at the Key itself", key)
	}
}

// A Limiter and a queue given the same Key never read nor change each
// other's data: the Limiter does not count the messages as holders nor
// delete them as lapsed leases, and the queue does not deliver, count or
// delete the Limiter's holders.
func TestLimiterOnTheSameKey(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := newQueue(t, b, time.Minute, 0)
		key := q.Config().Key
		t.Cleanup(func() { b.Client.Del(ctx, key) })
		l, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute})
		require.NoError(t, err)

		ids := make([]string, 3)
		for i, delay := range []time.Duration{0, 0, time.Hour} {
			ids[i], err = q.Push(ctx, []byte{byte(i)}, delay)
			require.NoError(t, err)
		}
		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		require.Equal(t, ids[0], m.ID)

		n, err := l.Count(ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "the messages are not holders")
		res, err := l.TryAcquire(ctx, "h")
		require.NoError(t, err)
		assert.True(t, res.Acquired, "the messages take no room")
		res, err = l.TryAcquire(ctx, "other")
		require.NoError(t, err)
		assert.False(t, res.Acquired, "the Limiter counts its own holder")
		assert.Equal(t, [4]int64{1, 1, 1, 0}, lens(t, q), "the Limiter deleted no message")

		require.NoError(t, q.Extend(ctx, m))
		require.NoError(t, q.Ack(ctx, m))
		m, err = pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		assert.Equal(t, ids[1], m.ID, "a holder is not a message")
		assert.Equal(t, []byte{1}, m.Payload)
		require.NoError(t, q.Nack(ctx, m, 0))

		holders, err := l.Holders(ctx)
		require.NoError(t, err)
		require.Len(t, holders, 1, "the queue deleted no holder")
		assert.Equal(t, "h", holders[0].ID)
		n, err = l.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n)
	})
}
