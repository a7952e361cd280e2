package delayqueue_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A call whose reply is lost for good fails with an unknown outcome; the
// same call made again answers as the first run would have, and the queue
// is left as one call leaves it.

// lostQueue runs test on each backend with a Queue on a client whose
// replies can be cut, and lose, which loses every reply to the next call
// of op and to none after it returns.
func lostQueue(t *testing.T, maxAttempts int,
	test func(t *testing.T, q *delayqueue.Queue, lose func(op string, call func() error))) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		client, cutter := b.CutClient(t)
		require.NoError(t, delayqueue.LoadScripts(context.Background(), client))
		key := b.Key(t, "dq-test:")
		t.Cleanup(func() { b.Client.Del(context.Background(), allKeys(key)...) })
		q := newQueueOn(t, client, delayqueue.Config{Key: key, Visibility: time.Minute, MaxAttempts: maxAttempts})
		test(t, q, func(op string, call func() error) {
			t.Helper()
			before := cutter.Cuts()
			cutter.Arm(10, "evalsha", delayqueue.ScriptHash(op), key)
			err := call()
			cutter.Arm(0)
			require.Greater(t, cutter.Cuts(), before, "the reply of %s was cut", op)
			require.Error(t, err, "the outcome of %s is unknown", op)
			assert.NotErrorIs(t, err, delayqueue.ErrNotHeld, op)
		})
	})
}

func TestAckLostThenRepeated(t *testing.T) {
	lostQueue(t, 0, func(t *testing.T, q *delayqueue.Queue, lose func(string, func() error)) {
		ctx := context.Background()
		_, err := q.Push(ctx, []byte("job"), 0)
		require.NoError(t, err)
		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		lose("ack", func() error { return q.Ack(ctx, m) })
		assert.Equal(t, [4]int64{0, 0, 0, 0}, lens(t, q), "the first run acked it")
		assert.NoError(t, q.Ack(ctx, m), "the repeat answers as the first run did")
	})
}

func TestNackLostThenRepeated(t *testing.T) {
	lostQueue(t, 0, func(t *testing.T, q *delayqueue.Queue, lose func(string, func() error)) {
		ctx := context.Background()
		_, err := q.Push(ctx, []byte("job"), 0)
		require.NoError(t, err)
		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		lose("nack", func() error { return q.Nack(ctx, m, time.Hour) })
		assert.Equal(t, [4]int64{0, 1, 0, 0}, lens(t, q), "the first run gave it back")
		assert.NoError(t, q.Nack(ctx, m, time.Hour), "the repeat answers as the first run did")
		assert.Equal(t, [4]int64{0, 1, 0, 0}, lens(t, q), "given back once")
		_, err = pollWithin(t, q, 200*time.Millisecond)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "the repeat did not make it due at once")
	})
}

func TestExtendLostThenRepeated(t *testing.T) {
	lostQueue(t, 0, func(t *testing.T, q *delayqueue.Queue, lose func(string, func() error)) {
		ctx := context.Background()
		_, err := q.Push(ctx, []byte("job"), 0)
		require.NoError(t, err)
		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		lose("extend", func() error { return q.Extend(ctx, m) })
		require.NoError(t, q.Extend(ctx, m))
		require.NoError(t, q.Ack(ctx, m))
		assert.Equal(t, [4]int64{0, 0, 0, 0}, lens(t, q))
	})
}

func TestRequeueAndDropLostThenRepeated(t *testing.T) {
	lostQueue(t, 1, func(t *testing.T, q *delayqueue.Queue, lose func(string, func() error)) {
		ctx := context.Background()
		ids, err := q.PushBatch(ctx, []delayqueue.Job{{Payload: []byte("a")}, {Payload: []byte("b")}})
		require.NoError(t, err)
		for range ids {
			m, err := pollWithin(t, q, deliveredWithin)
			require.NoError(t, err)
			require.NoError(t, q.Nack(ctx, m, 0))
		}
		lose("requeue", func() error { _, err := q.Requeue(ctx, ids[0]); return err })
		n, err := q.Requeue(ctx, ids[0])
		require.NoError(t, err)
		assert.Equal(t, 1, n, "the repeat counts what the first run moved")
		assert.Equal(t, [4]int64{1, 0, 0, 1}, lens(t, q), "moved once")

		lose("drop", func() error { _, err := q.Drop(ctx, ids[1]); return err })
		n, err = q.Drop(ctx, ids[1])
		require.NoError(t, err)
		assert.Equal(t, 0, n, "as Drop's doc says, the repeat counts only what is still a dead letter")
		assert.Equal(t, [4]int64{1, 0, 0, 0}, lens(t, q), "dropped once, nothing else")
	})
}

// A Poll whose reply is lost for good gives back what it may have taken:
// the message is due again at once, for the next Poll, with no attempt
// spent on a delivery nobody got.
func TestPollLostGivesBack(t *testing.T) {
	lostQueue(t, 0, func(t *testing.T, q *delayqueue.Queue, lose func(string, func() error)) {
		ctx := context.Background()
		id, err := q.Push(ctx, []byte("job"), 0)
		require.NoError(t, err)
		lose("poll", func() error { _, err := pollWithin(t, q, 5*time.Second); return err })
		assert.Equal(t, [4]int64{1, 0, 0, 0}, lens(t, q), "ready again, not in flight for nobody")
		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err, "the same call made again gets it")
		assert.Equal(t, id, m.ID)
		assert.Equal(t, 1, m.Attempt, "no attempt was spent")
		require.NoError(t, q.Ack(ctx, m))
	})
}
