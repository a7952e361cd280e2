package delayqueue_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// Every write of a queue takes effect once, however often go-redis sends
// it: each test loses one reply after the server ran the call, so that
// go-redis, with its default retries, sends it again, and checks that the
// effect and the answer are those of one call.

// cutQueue runs test on each backend with a Queue, of visibility and max
// attempts, on a client whose replies cutter can cut, with go-redis's
// default retries and every script cached, so that the reply cut is never
// a NOSCRIPT one.
func cutQueue(t *testing.T, visibility time.Duration, maxAttempts int,
	test func(t *testing.T, b *redistest.Backend, q *delayqueue.Queue, cut func(op string))) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		client, cutter := b.CutClient(t)
		require.NoError(t, delayqueue.LoadScripts(context.Background(), client))
		key := b.Key(t, "dq-test:")
		t.Cleanup(func() { b.Client.Del(context.Background(), allKeys(key)...) })
		q := newQueueOn(t, client, delayqueue.Config{Key: key, Visibility: visibility, MaxAttempts: maxAttempts})
		armed, before := "", 0
		check := func() {
			if armed != "" {
				assert.Equal(t, before+1, cutter.Cuts(), "the reply of %s was cut once", armed)
				assert.False(t, cutter.Armed(), "the reply of %s was cut", armed)
			}
		}
		test(t, b, q, func(op string) {
			check()
			armed, before = op, cutter.Cuts()
			cutter.Arm(1, "evalsha", delayqueue.ScriptHash(op), key)
		})
		check()
	})
}

// lens is Len as one value: ready, delayed, in flight, dead.
func lens(t *testing.T, q *delayqueue.Queue) [4]int64 {
	t.Helper()
	ready, delayed, inflight, dead, err := q.Len(context.Background())
	require.NoError(t, err)
	return [4]int64{ready, delayed, inflight, dead}
}

// A Push whose reply is lost queues its message once, under the ID the
// caller got; so does each message of a PushBatch.
func TestPushResentQueuesOnce(t *testing.T) {
	cutQueue(t, time.Minute, 0, func(t *testing.T, b *redistest.Backend, q *delayqueue.Queue, cut func(string)) {
		ctx := context.Background()
		cut("push")
		id, err := q.Push(ctx, []byte("once"), 0)
		require.NoError(t, err)
		assert.Equal(t, [4]int64{1, 0, 0, 0}, lens(t, q), "one message queued")
		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		assert.Equal(t, id, m.ID)
		require.NoError(t, q.Ack(ctx, m))
		assert.Equal(t, [4]int64{0, 0, 0, 0}, lens(t, q))
	})
	cutQueue(t, time.Minute, 0, func(t *testing.T, b *redistest.Backend, q *delayqueue.Queue, cut func(string)) {
		cut("push")
		ids, err := q.PushBatch(context.Background(), []delayqueue.Job{
			{Payload: []byte("a"), Delay: time.Hour}, {Payload: []byte("b"), Delay: time.Hour}, {Payload: []byte("c"), Delay: time.Hour}})
		require.NoError(t, err)
		assert.Len(t, ids, 3)
		assert.Equal(t, [4]int64{0, 3, 0, 0}, lens(t, q), "three messages queued, not six")
	})
}

// A Poll whose reply is lost delivers one message, once: the re-sent call
// finds the delivery its first run made and returns it, same message and
// same attempt, and the other message stays ready for the next Poll.
func TestPollResentDeliversOnce(t *testing.T) {
	cutQueue(t, time.Minute, 0, func(t *testing.T, b *redistest.Backend, q *delayqueue.Queue, cut func(string)) {
		ctx := context.Background()
		ids, err := q.PushBatch(ctx, []delayqueue.Job{{Payload: []byte("first")}, {Payload: []byte("second")}})
		require.NoError(t, err)
		cut("poll")
		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		assert.Equal(t, ids[0], m.ID)
		assert.Equal(t, 1, m.Attempt)
		assert.Equal(t, [4]int64{1, 0, 1, 0}, lens(t, q), "one delivered, one ready")
		require.NoError(t, q.Ack(ctx, m))
		next, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		assert.Equal(t, ids[1], next.ID)
		assert.Equal(t, 1, next.Attempt, "no attempt was burnt")
		require.NoError(t, q.Ack(ctx, next))
	})
}

// A Poll that waits, whose registration's reply is lost, is woken by the
// next push as one waiter.
func TestPollResentWhileWaiting(t *testing.T) {
	cutQueue(t, time.Minute, 0, func(t *testing.T, b *redistest.Backend, q *delayqueue.Queue, cut func(string)) {
		ctx := context.Background()
		cut("poll")
		got := make(chan delayqueue.Message, 1)
		go func() {
			m, err := pollWithin(t, q, 5*time.Second)
			assert.NoError(t, err)
			got <- m
		}()
		time.Sleep(200 * time.Millisecond)
		id, err := q.Push(ctx, []byte("wake"), 0)
		require.NoError(t, err)
		m := <-got
		assert.Equal(t, id, m.ID)
		assert.Equal(t, 1, m.Attempt)
		require.NoError(t, q.Ack(ctx, m))
	})
}

// An Ack whose reply is lost reports the success of its first run.
func TestAckResentSucceeds(t *testing.T) {
	cutQueue(t, time.Minute, 0, func(t *testing.T, b *redistest.Backend, q *delayqueue.Queue, cut func(string)) {
		ctx := context.Background()
		_, err := q.Push(ctx, []byte("job"), 0)
		require.NoError(t, err)
		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		cut("ack")
		require.NoError(t, q.Ack(ctx, m), "the first run acked it")
		assert.Equal(t, [4]int64{0, 0, 0, 0}, lens(t, q))
		assert.Empty(t, existing(t, b, q.Config().Key))
	})
}

// A Nack whose reply is lost gives its message back once, and reports the
// success of its first run: due again for the next attempt, or, on the
// last, dead-lettered once.
func TestNackResentGivesBackOnce(t *testing.T) {
	cutQueue(t, time.Minute, 2, func(t *testing.T, b *redistest.Backend, q *delayqueue.Queue, cut func(string)) {
		ctx := context.Background()
		id, err := q.Push(ctx, []byte("job"), 0)
		require.NoError(t, err)
		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		cut("nack")
		require.NoError(t, q.Nack(ctx, m, 0))
		assert.Equal(t, [4]int64{1, 0, 0, 0}, lens(t, q), "given back once")

		m, err = pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		assert.Equal(t, id, m.ID)
		assert.Equal(t, 2, m.Attempt)
		cut("nack")
		require.NoError(t, q.Nack(ctx, m, 0))
		assert.Equal(t, [4]int64{0, 0, 0, 1}, lens(t, q), "dead-lettered once")
		letters, err := q.DeadLetters(ctx, 10)
		require.NoError(t, err)
		require.Len(t, letters, 1)
		assert.Equal(t, 2, letters[0].Attempt)
	})
}

// An Extend whose reply is lost renews the lease, and reports so.
func TestExtendResentRenews(t *testing.T) {
	const vis = 400 * time.Millisecond
	cutQueue(t, vis, 0, func(t *testing.T, b *redistest.Backend, q *delayqueue.Queue, cut func(string)) {
		ctx := context.Background()
		_, err := q.Push(ctx, []byte("job"), 0)
		require.NoError(t, err)
		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		b.Advance(vis / 2)
		cut("extend")
		require.NoError(t, q.Extend(ctx, m))
		b.Advance(vis/2 + 50*time.Millisecond)
		assert.Equal(t, [4]int64{0, 0, 1, 0}, lens(t, q))
		require.NoError(t, q.Ack(ctx, m), "the lease lives past its first deadline")
	})
}

// A Requeue whose reply is lost moves its dead letter back once, and
// counts it, as its first run did.
func TestRequeueResentCountsOnce(t *testing.T) {
	cutQueue(t, time.Minute, 1, func(t *testing.T, b *redistest.Backend, q *delayqueue.Queue, cut func(string)) {
		ctx := context.Background()
		id, err := q.Push(ctx, []byte("job"), 0)
		require.NoError(t, err)
		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		require.NoError(t, q.Nack(ctx, m, 0))
		cut("requeue")
		n, err := q.Requeue(ctx, id, "no-such-id")
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		assert.Equal(t, [4]int64{1, 0, 0, 0}, lens(t, q))
		m, err = pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		assert.Equal(t, 1, m.Attempt)
		require.NoError(t, q.Ack(ctx, m))
	})
}

// A Drop whose reply is lost deletes its dead letters once and nothing
// else; as its doc says, the re-sent run counts only the ids still dead
// letters then, so it may report fewer than were deleted, never more.
func TestDropResentDeletesOnce(t *testing.T) {
	cutQueue(t, time.Minute, 1, func(t *testing.T, b *redistest.Backend, q *delayqueue.Queue, cut func(string)) {
		ctx := context.Background()
		ids, err := q.PushBatch(ctx, []delayqueue.Job{{Payload: []byte("a")}, {Payload: []byte("b")}})
		require.NoError(t, err)
		for range ids {
			m, err := pollWithin(t, q, deliveredWithin)
			require.NoError(t, err)
			require.NoError(t, q.Nack(ctx, m, 0))
		}
		cut("drop")
		n, err := q.Drop(ctx, ids[0])
		require.NoError(t, err)
		assert.Equal(t, 0, n, "the re-sent run found it gone")
		letters, err := q.DeadLetters(ctx, 10)
		require.NoError(t, err)
		require.Len(t, letters, 1, "the other dead letter is kept")
		assert.Equal(t, ids[1], letters[0].ID)
	})
}

// A Poll that stops waiting leaves the waiters, though the reply to its
// leaving is lost: the keeper it was is gone, and no consumer is left
// registered.
func TestLeaveResent(t *testing.T) {
	cutQueue(t, time.Minute, 0, func(t *testing.T, b *redistest.Backend, q *delayqueue.Queue, cut func(string)) {
		ctx := context.Background()
		_, err := q.Push(ctx, []byte("later"), time.Hour) // so the waiter is the keeper
		require.NoError(t, err)
		cut("leave")
		_, err = pollWithin(t, q, 300*time.Millisecond)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		key := q.Config().Key
		assert.Zero(t, b.Client.ZCard(ctx, sideKey(key, "waiters")).Val(), "no waiter is left")
		assert.Empty(t, b.Client.HGet(ctx, sideKey(key, "info"), "keeper").Val(), "no keeper is left")
	})
}

// A Push sent again after its message was delivered and acked in between,
// within go-redis's retries, queues it again under the same ID, as Push's
// doc says: the message is delivered twice, never lost.
func TestPushResentAfterAckQueuesAgain(t *testing.T) {
	for _, b := range []*redistest.Backend{redistest.Redis(t), redistest.RedisCluster(t)} {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			q := newQueue(t, b, time.Minute, 0)
			var between atomic.Value
			client, cutter := b.CutClient(t)
			// The push's reply was lost: before go-redis sends it again, and
			// before the client reads that it was lost, a consumer takes the
			// message and acks it.
			cutter.Then(func() {
				m, err := pollWithin(t, q, deliveredWithin)
				if assert.NoError(t, err) {
					assert.NoError(t, q.Ack(ctx, m))
					between.Store(m.ID)
				}
			})
			require.NoError(t, delayqueue.LoadScripts(ctx, client))
			pusher := newQueueOn(t, client, q.Config())
			cutter.Arm(1, "evalsha", delayqueue.ScriptHash("push"), q.Config().Key)
			id, err := pusher.Push(ctx, []byte("job"), 0)
			require.NoError(t, err)
			require.Equal(t, 1, cutter.Cuts())
			require.Equal(t, id, between.Load(), "acked between the two runs")
			assert.Equal(t, [4]int64{1, 0, 0, 0}, lens(t, q), "queued again")
			m, err := pollWithin(t, q, deliveredWithin)
			require.NoError(t, err)
			assert.Equal(t, id, m.ID, "under the same ID")
			require.NoError(t, q.Ack(ctx, m))
		})
	}
}
