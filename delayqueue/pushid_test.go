package delayqueue_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// requireDuplicate checks that err says the IDs ids were queued already,
// and nothing else.
func requireDuplicate(t *testing.T, err error, ids ...string) {
	t.Helper()
	require.ErrorIs(t, err, delayqueue.ErrDuplicate)
	var dup *delayqueue.DuplicateError
	require.ErrorAs(t, err, &dup)
	assert.Equal(t, ids, dup.IDs)
	for _, other := range []error{delayqueue.ErrInvalidArgument, delayqueue.ErrInvalidConfig,
		delayqueue.ErrNotHeld, delayqueue.ErrOutcomeUnknown} {
		assert.NotErrorIs(t, err, other)
	}
	assert.True(t, strings.HasPrefix(err.Error(), `delayqueue: push`), "%q", err)
	for _, id := range ids {
		assert.Contains(t, err.Error(), `"`+id+`"`)
	}
}

// A Push with an ID that is queued, delayed, in flight or dead changes
// nothing (payload, due time, attempts) and reports ErrDuplicate with the
// ID; once the message is acked, the ID is free again.
func TestPushWithIDQueuedOnce(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		push := func(q *delayqueue.Queue, payload string, delay time.Duration) error {
			t.Helper()
			id, err := q.Push(ctx, []byte(payload), delay, delayqueue.WithID("order-1"))
			assert.Equal(t, "order-1", id)
			return err
		}

		// Queued: a second push, of another payload and delay, leaves the
		// first as it was.
		q := newQueue(t, b, time.Minute, 0)
		require.NoError(t, push(q, "first", 0))
		requireDuplicate(t, push(q, "second", time.Hour), "order-1")
		_, err := q.PushAt(ctx, []byte("third"), b.Now().Add(time.Hour), delayqueue.WithID("order-1"))
		requireDuplicate(t, err, "order-1")
		assert.Equal(t, [4]int64{1, 0, 0, 0}, lens(t, q))
		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		assert.Equal(t, "order-1", m.ID)
		assert.Equal(t, "first", string(m.Payload))
		assert.Equal(t, 1, m.Attempt)

		// In flight.
		requireDuplicate(t, push(q, "second", 0), "order-1")
		assert.Equal(t, [4]int64{0, 0, 1, 0}, lens(t, q))
		require.NoError(t, q.Ack(ctx, m), "the delivery still holds its lease")

		// Acked: the ID is free again.
		require.NoError(t, push(q, "again", time.Hour))

		// Delayed.
		assert.Equal(t, [4]int64{0, 1, 0, 0}, lens(t, q))
		requireDuplicate(t, push(q, "second", 0), "order-1")
		assert.Equal(t, [4]int64{0, 1, 0, 0}, lens(t, q), "still delayed")

		// Dead.
		q = newQueue(t, b, time.Minute, 1)
		require.NoError(t, push(q, "first", 0))
		m, err = pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		require.NoError(t, q.Nack(ctx, m, 0))
		requireDuplicate(t, push(q, "second", 0), "order-1")
		assert.Equal(t, [4]int64{0, 0, 0, 1}, lens(t, q))
		dead, err := q.DeadLetters(ctx, 10)
		require.NoError(t, err)
		require.Len(t, dead, 1)
		assert.Equal(t, "first", string(dead[0].Payload))
		assert.Equal(t, 1, dead[0].Attempt)
		n, err := q.Requeue(ctx, "order-1")
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		m, err = pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		assert.Equal(t, "first", string(m.Payload))
		require.NoError(t, q.Ack(ctx, m))
		assert.Empty(t, existing(t, b, q.Config().Key), "an empty queue leaves no keys")
	})
}

// A PushBatch queues every job whose ID is new, returns every ID in
// order, and an error that names the IDs that were there.
func TestPushBatchWithIDs(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := newQueue(t, b, time.Minute, 0)
		_, err := q.Push(ctx, []byte("a"), time.Hour, delayqueue.WithID("a"))
		require.NoError(t, err)
		_, err = q.Push(ctx, []byte("c"), time.Hour, delayqueue.WithID("c"))
		require.NoError(t, err)
		ids, err := q.PushBatch(ctx, []delayqueue.Job{
			{ID: "a", Payload: []byte("a2")}, {ID: "b", Payload: []byte("b")}, {Payload: []byte("minted")},
			{ID: "c", Payload: []byte("c2")}})
		requireDuplicate(t, err, "a", "c")
		require.Len(t, ids, 4)
		assert.Equal(t, []string{"a", "b"}, ids[:2])
		assert.NotEmpty(t, ids[2])
		assert.Equal(t, "c", ids[3])
		assert.Equal(t, [4]int64{2, 2, 0, 0}, lens(t, q), "b and the minted one queued, a and c as they were")
		got := map[string]string{}
		for range 2 {
			m, err := pollWithin(t, q, deliveredWithin)
			require.NoError(t, err)
			got[m.ID] = string(m.Payload)
			require.NoError(t, q.Ack(ctx, m))
		}
		assert.Equal(t, map[string]string{"b": "b", ids[2]: "minted"}, got)
	})
}

// A Push with the caller's ID whose reply is lost, which go-redis sends
// again, answers as its first run did: one message, no ErrDuplicate. So
// does each job of a PushBatch.
func TestPushWithIDResentQueuesOnce(t *testing.T) {
	cutQueue(t, time.Minute, 0, func(t *testing.T, b *redistest.Backend, q *delayqueue.Queue, cut func(string)) {
		ctx := context.Background()
		cut("push")
		id, err := q.Push(ctx, []byte("once"), 0, delayqueue.WithID("x"))
		require.NoError(t, err)
		assert.Equal(t, "x", id)
		assert.Equal(t, [4]int64{1, 0, 0, 0}, lens(t, q), "one message queued")
		cut("push")
		ids, err := q.PushBatch(ctx, []delayqueue.Job{
			{ID: "y", Payload: []byte("y"), Delay: time.Hour}, {ID: "x", Payload: []byte("x2")}, {Payload: []byte("z"), Delay: time.Hour}})
		requireDuplicate(t, err, "x")
		require.Len(t, ids, 3)
		assert.Equal(t, [4]int64{1, 2, 0, 0}, lens(t, q), "y and z queued once each")
	})
}

// A caller told ErrOutcomeUnknown who calls again with the same ID queues
// the message once: the second call answers nil or ErrDuplicate.
func TestPushWithIDAfterOutcomeUnknown(t *testing.T) {
	redistest.EachCutBackend(t, delayqueue.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		key := b.Key(t, "dq-test:")
		t.Cleanup(func() { b.Client.Del(ctx, allKeys(key)...) })
		q := newQueueOn(t, client, delayqueue.Config{Key: key})
		cutter.Arm(10, "evalsha", delayqueue.ScriptHash("push"), key)
		_, err := q.Push(ctx, []byte("p"), 0, delayqueue.WithID("x"))
		cutter.Arm(0)
		require.ErrorIs(t, err, delayqueue.ErrOutcomeUnknown)
		id, err := q.Push(ctx, []byte("p"), 0, delayqueue.WithID("x"))
		assert.Equal(t, "x", id)
		if err != nil {
			requireDuplicate(t, err, "x")
		}
		assert.Equal(t, [4]int64{1, 0, 0, 0}, lens(t, q), "one message queued")
	})
}

// An ID that is empty, too long, or that the queue cannot hold (a space
// or a control character, a leading '#'), or an ID given to two jobs of
// one batch, is refused with ErrInvalidArgument, with nothing sent.
func TestPushRefusesBadIDs(t *testing.T) {
	b := redistest.Miniredis(t)
	client, count := countedClient(t, b)
	q := newQueueOn(t, client, delayqueue.Config{Key: "jobs"})
	ctx := context.Background()
	for _, id := range []string{"", strings.Repeat("x", delayqueue.MaxIDLen+1), "a b", "a\tb", "a\nb", "a\x00b", "#lease", "\x7f"} {
		_, err := q.Push(ctx, nil, 0, delayqueue.WithID(id))
		assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument, "%q", id)
		assert.True(t, strings.HasPrefix(err.Error(), `delayqueue: push "jobs": `), "%q", err)
		_, err = q.PushAt(ctx, nil, time.Now(), delayqueue.WithID(id))
		assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument, "%q", id)
		if id != "" {
			_, err = q.PushBatch(ctx, []delayqueue.Job{{ID: id}})
			assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument, "%q", id)
		}
	}
	_, err := q.PushBatch(ctx, []delayqueue.Job{{ID: "a"}, {ID: "b"}, {ID: "a"}})
	assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument, "an ID twice in one batch")
	assert.False(t, errors.Is(err, delayqueue.ErrDuplicate))
	assert.Zero(t, count.Commands(), "nothing was sent")
	_, err = q.Push(ctx, nil, 0, delayqueue.WithID(strings.Repeat("x", delayqueue.MaxIDLen)))
	assert.NoError(t, err, "an ID of MaxIDLen bytes")
}
