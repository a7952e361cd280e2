package delayqueue_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// Messages lists, and Cancel deletes, the messages of a queue by state.

// stateScene fills q with one message of each state but ready: a dead
// letter "dead" (through a Queue of one attempt on q's Key), a message in
// flight "held", given back once before, and three messages ready
// ("r1", "r2", "r3", pushed in that order) and two delayed by an hour and
// two ("d2", "d1", due in that order). It returns the IDs by payload, and
// the delivery in flight.
func stateScene(t *testing.T, b *redistest.Backend, q *delayqueue.Queue) (map[string]string, delayqueue.Message) {
	t.Helper()
	ctx := context.Background()
	ids := map[string]string{}
	once := newQueueOn(t, b.Client, delayqueue.Config{Key: q.Config().Key, Visibility: time.Hour, MaxAttempts: 1})
	id, err := once.Push(ctx, []byte("dead"), 0)
	require.NoError(t, err)
	m, err := pollWithin(t, once, deliveredWithin)
	require.NoError(t, err)
	require.NoError(t, once.Nack(ctx, m, 0))
	ids["dead"] = id

	ids["held"], err = q.Push(ctx, []byte("held"), 0)
	require.NoError(t, err)
	m, err = pollWithin(t, q, deliveredWithin)
	require.NoError(t, err)
	require.NoError(t, q.Nack(ctx, m, 0), "given back once")
	held, err := pollWithin(t, q, deliveredWithin)
	require.NoError(t, err)
	require.Equal(t, ids["held"], held.ID)
	require.Equal(t, 2, held.Attempt)

	for _, p := range []string{"r1", "r2", "r3"} {
		ids[p], err = q.Push(ctx, []byte(p), 0)
		require.NoError(t, err)
	}
	ids["d1"], err = q.Push(ctx, []byte("d1"), 2*time.Hour)
	require.NoError(t, err)
	ids["d2"], err = q.Push(ctx, []byte("d2"), time.Hour)
	require.NoError(t, err)
	return ids, held
}

// payloads are the messages' payloads, in order.
func payloads(msgs []delayqueue.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Payload)
	}
	return out
}

// messages reads one page of state, with no error.
func messages(t *testing.T, q *delayqueue.Queue, state delayqueue.State, offset, count int) []delayqueue.Message {
	t.Helper()
	msgs, err := q.Messages(context.Background(), state, offset, count)
	require.NoError(t, err, "%v", state)
	return msgs
}

// Messages gives each state's messages in its order, with its ID,
// payload, deliveries so far, due time and, in flight, lease deadline; no
// Token; and pages them with offset and count.
func TestMessagesListsEachState(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		q := newQueue(t, b, time.Hour, 5)
		ids, held := stateScene(t, b, q)
		assert.Equal(t, [4]int64{3, 2, 1, 1}, lens(t, q))

		ready := messages(t, q, delayqueue.Ready, 0, 100)
		assert.Equal(t, []string{"r1", "r2", "r3"}, payloads(ready), "in push order")
		delayed := messages(t, q, delayqueue.Delayed, 0, 100)
		assert.Equal(t, []string{"d2", "d1"}, payloads(delayed), "earliest due first")
		inflight := messages(t, q, delayqueue.InFlight, 0, 100)
		assert.Equal(t, []string{"held"}, payloads(inflight))
		dead := messages(t, q, delayqueue.Dead, 0, 100)
		assert.Equal(t, []string{"dead"}, payloads(dead))

		for _, m := range append(append(append(ready, delayed...), inflight...), dead...) {
			assert.Equal(t, ids[string(m.Payload)], m.ID, "%s", m.Payload)
			assert.Empty(t, m.Token, "%s: no delivery to act on", m.Payload)
		}
		for _, m := range ready {
			assert.Equal(t, 0, m.Attempt, "%s: never delivered", m.Payload)
			assert.True(t, m.Deadline.IsZero(), "%s", m.Payload)
		}
		assert.Equal(t, ready[0].DueAt, ready[0].DueAt.Truncate(time.Millisecond))
		assert.False(t, ready[2].DueAt.Before(ready[0].DueAt))
		assert.Equal(t, time.Hour, delayed[1].DueAt.Sub(delayed[0].DueAt).Round(time.Second), "d1 is due an hour after d2")
		assert.Greater(t, delayed[0].DueAt.Sub(ready[2].DueAt), 59*time.Minute, "d2 is due an hour after its push")
		assert.Equal(t, held.Attempt, inflight[0].Attempt, "deliveries so far, the one in flight counted")
		assert.Equal(t, held.DueAt, inflight[0].DueAt)
		assert.Equal(t, held.Deadline, inflight[0].Deadline)
		assert.Equal(t, 1, dead[0].Attempt)
		assert.True(t, dead[0].Deadline.IsZero())

		// An ack needs the delivery's token, which a listed message lacks.
		assert.ErrorIs(t, q.Ack(context.Background(), inflight[0]), delayqueue.ErrInvalidConfig)
		assert.Equal(t, [4]int64{3, 2, 1, 1}, lens(t, q), "Messages wrote nothing")

		assert.Equal(t, []string{"r2"}, payloads(messages(t, q, delayqueue.Ready, 1, 1)))
		assert.Equal(t, []string{"r2", "r3"}, payloads(messages(t, q, delayqueue.Ready, 1, 5)))
		assert.Empty(t, messages(t, q, delayqueue.Ready, 3, 5))
		assert.Equal(t, []string{"d1"}, payloads(messages(t, q, delayqueue.Delayed, 1, 5)))
		assert.Empty(t, messages(t, q, delayqueue.InFlight, 1, 5))
		assert.Empty(t, messages(t, q, delayqueue.Dead, 1, 5))
	})
}

// A payload comes back byte for byte, and a message given back counts the
// deliveries it had.
func TestMessagesPayloadAndDeliveries(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := newQueue(t, b, time.Hour, 0)
		payload := []byte("a\x00b \xff\n")
		id, err := q.Push(ctx, payload, 0)
		require.NoError(t, err)
		for _, delay := range []time.Duration{0, time.Hour} {
			m, err := pollWithin(t, q, deliveredWithin)
			require.NoError(t, err)
			require.NoError(t, q.Nack(ctx, m, delay))
		}
		got := messages(t, q, delayqueue.Delayed, 0, 1)
		require.Len(t, got, 1)
		assert.Equal(t, id, got[0].ID)
		assert.Equal(t, payload, got[0].Payload)
		assert.Equal(t, 2, got[0].Attempt)
	})
}

// Messages refuses a state that is no State, a negative offset and a
// count out of 1..MaxBatch, with ErrInvalidArgument and nothing sent.
func TestMessagesRefusesBadInput(t *testing.T) {
	b := redistest.Miniredis(t)
	client, count := countedClient(t, b)
	q := newQueueOn(t, client, delayqueue.Config{Key: "jobs"})
	ctx := context.Background()
	for i, s := range []struct {
		state         delayqueue.State
		offset, count int
	}{{-1, 0, 1}, {4, 0, 1}, {delayqueue.Ready, -1, 1}, {delayqueue.Dead, 0, 0}, {delayqueue.InFlight, 0, delayqueue.MaxBatch + 1}} {
		msgs, err := q.Messages(ctx, s.state, s.offset, s.count)
		assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument, "step %d", i)
		assert.True(t, strings.HasPrefix(err.Error(), `delayqueue: messages "jobs": invalid argument: `), "step %d: %q", i, err)
		assert.Nil(t, msgs, "step %d", i)
	}
	_, err := q.Cancel(ctx, make([]string, delayqueue.MaxBatch+1)...)
	assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument)
	assert.True(t, strings.HasPrefix(err.Error(), `delayqueue: cancel "jobs": invalid argument: `), "%q", err)
	n, err := q.Cancel(ctx)
	assert.NoError(t, err)
	assert.Zero(t, n)
	var nilCtx context.Context
	_, err = q.Messages(nilCtx, delayqueue.Ready, 0, 1)
	assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument)
	_, err = q.Cancel(nilCtx, "x")
	assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument)
	for _, z := range []*delayqueue.Queue{nil, new(delayqueue.Queue)} {
		assert.NotPanics(t, func() {
			_, err := z.Messages(ctx, delayqueue.Ready, 0, 1)
			assert.ErrorIs(t, err, delayqueue.ErrInvalidConfig)
			_, err = z.Cancel(ctx, "x")
			assert.ErrorIs(t, err, delayqueue.ErrInvalidConfig)
		})
	}
	assert.Zero(t, count.Commands(), "nothing was sent")
	assert.Equal(t, "ready", delayqueue.Ready.String())
	assert.Equal(t, "delayed", delayqueue.Delayed.String())
	assert.Equal(t, "in flight", delayqueue.InFlight.String())
	assert.Equal(t, "dead", delayqueue.Dead.String())
	assert.Equal(t, "State(7)", delayqueue.State(7).String())
}

// Cancel deletes the ready and delayed messages among its IDs, each
// counted once, and leaves alone a message in flight, whose consumer's Ack
// still holds, a dead letter and an unknown ID. A cancelled message is
// never delivered, and its ID may be pushed again.
func TestCancelDeletesReadyAndDelayed(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := newQueue(t, b, time.Hour, 5)
		ids, held := stateScene(t, b, q)
		n, err := q.Cancel(ctx, ids["r1"], ids["d1"], ids["r1"], ids["held"], ids["dead"], "no-such-id")
		require.NoError(t, err)
		assert.Equal(t, 2, n, "r1 and d1, r1 once")
		assert.Equal(t, [4]int64{2, 1, 1, 1}, lens(t, q))
		assert.Equal(t, []string{"r2", "r3"}, payloads(messages(t, q, delayqueue.Ready, 0, 10)))
		assert.Equal(t, []string{"d2"}, payloads(messages(t, q, delayqueue.Delayed, 0, 10)))
		require.NoError(t, q.Ack(ctx, held), "the delivery in flight still holds its lease")

		for _, want := range []string{"r2", "r3"} {
			m, err := pollWithin(t, q, deliveredWithin)
			require.NoError(t, err)
			assert.Equal(t, want, string(m.Payload), "r1 is never delivered")
			require.NoError(t, q.Ack(ctx, m))
		}

		_, err = q.Push(ctx, []byte("again"), 0, delayqueue.WithID("mine"))
		require.NoError(t, err)
		n, err = q.Cancel(ctx, "mine")
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		_, err = q.Push(ctx, []byte("again"), 0, delayqueue.WithID("mine"))
		assert.NoError(t, err, "a cancelled ID may be pushed again")
		assert.Equal(t, [4]int64{1, 1, 0, 1}, lens(t, q))
	})
}

// A queue that Cancel leaves without messages leaves no keys but the
// waiters' and Cancel's record, which lapses a minute later.
func TestCancelLeavesNoKeys(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := newQueue(t, b, time.Hour, 0)
		a, err := q.Push(ctx, []byte("a"), time.Hour, delayqueue.WithID("a"))
		require.NoError(t, err)
		bb, err := q.Push(ctx, []byte("b"), 0)
		require.NoError(t, err)
		n, err := q.Cancel(ctx, a, bb)
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		assert.Empty(t, existing(t, b, q.Config().Key))
		records := recordKeys(t, b, q.Config().Key)
		require.Len(t, records, 1, "one record of the call")
		ttl := b.Client.PTTL(ctx, records[0]).Val()
		assert.True(t, ttl > 0 && ttl <= time.Minute, "the record lapses within a minute: %v", ttl)
	})
}

// recordKeys are the names of Cancel's records of the queue at key, on
// every master.
func recordKeys(t *testing.T, b *redistest.Backend, key string) []string {
	t.Helper()
	ctx := context.Background()
	pattern := strings.NewReplacer("{", `\{`, "}", `\}`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(queueKey(key)) + ":cancelled:*"
	var found []string
	var mu sync.Mutex
	keys := func(ctx context.Context, c *redis.Client) error {
		k, err := c.Keys(ctx, pattern).Result()
		mu.Lock()
		found = append(found, k...)
		mu.Unlock()
		return err
	}
	if cluster, ok := b.Client.(*redis.ClusterClient); ok {
		require.NoError(t, cluster.ForEachMaster(ctx, keys))
	} else {
		require.NoError(t, keys(ctx, b.Client.(*redis.Client)))
	}
	return found
}

// Cancel finds its messages anywhere in a queue longer than the page it
// reads at a time, and leaves every other as it was, in its order.
func TestCancelOnALongQueue(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := newQueue(t, b, time.Hour, 0)
		const total = 1300
		var ids []string
		for start := 0; start < total; start += delayqueue.MaxBatch {
			var jobs []delayqueue.Job
			for i := start; i < min(total, start+delayqueue.MaxBatch); i++ {
				jobs = append(jobs, delayqueue.Job{Payload: []byte(fmt.Sprint(i)), Delay: time.Hour})
			}
			got, err := q.PushBatch(ctx, jobs)
			require.NoError(t, err)
			ids = append(ids, got...)
		}
		gone := map[int]bool{3: true, 511: true, 512: true, 513: true, 900: true, 1299: true}
		var cancel []string
		for i := range gone {
			cancel = append(cancel, ids[i])
		}
		n, err := q.Cancel(ctx, cancel...)
		require.NoError(t, err)
		assert.Equal(t, len(gone), n)
		var want []string
		for i := range total {
			if !gone[i] {
				want = append(want, fmt.Sprint(i))
			}
		}
		var got []string
		for offset := 0; ; offset += delayqueue.MaxBatch {
			page := messages(t, q, delayqueue.Delayed, offset, delayqueue.MaxBatch)
			got = append(got, payloads(page)...)
			if len(page) < delayqueue.MaxBatch {
				break
			}
		}
		assert.Equal(t, want, got)
	})
}

// A Cancel whose reply is lost, and which go-redis sends again, answers
// what its first run deleted, and deletes nothing more: not even a
// message of the same ID pushed between, which only a new call deletes.
func TestCancelResentCountsItsFirstRun(t *testing.T) {
	cutQueue(t, time.Hour, 0, func(t *testing.T, b *redistest.Backend, q *delayqueue.Queue, cut func(string)) {
		ctx := context.Background()
		a, err := q.Push(ctx, []byte("a"), 0)
		require.NoError(t, err)
		c, err := q.Push(ctx, []byte("c"), time.Hour)
		require.NoError(t, err)
		_, err = q.Push(ctx, []byte("kept"), 0)
		require.NoError(t, err)
		cut("cancel")
		n, err := q.Cancel(ctx, a, c, "no-such-id")
		require.NoError(t, err)
		assert.Equal(t, 2, n, "the count of the first run")
		assert.Equal(t, [4]int64{1, 0, 0, 0}, lens(t, q))
	})
}

// A Cancel whose reply is lost for good fails with an unknown outcome;
// made again, it is a new call, and counts only what is still queued.
func TestCancelLostThenRepeated(t *testing.T) {
	lostQueue(t, 0, func(t *testing.T, q *delayqueue.Queue, lose func(string, func() error)) {
		ctx := context.Background()
		id, err := q.Push(ctx, []byte("a"), 0)
		require.NoError(t, err)
		lose("cancel", func() error {
			_, err := q.Cancel(ctx, id)
			assert.ErrorIs(t, err, delayqueue.ErrOutcomeUnknown)
			return err
		})
		assert.Equal(t, [4]int64{0, 0, 0, 0}, lens(t, q), "the first run cancelled it")
		n, err := q.Cancel(ctx, id)
		require.NoError(t, err)
		assert.Zero(t, n)
	})
}

// Messages and Cancel on a key of another type fail with WRONGTYPE and
// leave it as it was.
func TestMessagesAndCancelOnAnotherType(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := newQueue(t, b, time.Hour, 0)
		id, err := q.Push(ctx, []byte("a"), 0)
		require.NoError(t, err)
		bodies := sideKey(q.Config().Key, "bodies")
		dump := b.Client.HGetAll(ctx, bodies).Val()
		require.NoError(t, b.Client.Del(ctx, bodies).Err())
		require.NoError(t, b.Client.Set(ctx, bodies, "mine", 0).Err())
		_, err = q.Messages(ctx, delayqueue.Ready, 0, 10)
		assert.ErrorContains(t, err, "WRONGTYPE")
		_, err = q.Cancel(ctx, id)
		assert.ErrorContains(t, err, "WRONGTYPE")
		assert.Equal(t, "mine", b.Client.Get(ctx, bodies).Val())
		assert.Equal(t, [4]int64{1, 0, 0, 0}, lens(t, q), "the entry is left")
		require.NoError(t, b.Client.Del(ctx, bodies).Err())
		require.NoError(t, b.Client.HSet(ctx, bodies, dump).Err())
	})
}
