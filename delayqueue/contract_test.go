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

// A message is delivered once due by the server's clock, not before, with
// its payload byte for byte, Attempt 1 and DueAt its push time plus its
// delay; Ack removes it, and the empty queue leaves no keys.
func TestPushPollAck(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := newQueue(t, b, time.Minute, 0)
		key := q.Config().Key
		payload := make([]byte, 256)
		for i := range payload {
			payload[i] = byte(i) // every byte value, NUL included
		}
		// A delay no busy machine outruns between the push and the checks
		// that it is not due yet.
		const delay = 3 * time.Second
		before := b.Now()
		id, err := q.Push(ctx, payload, delay)
		require.NoError(t, err)
		after := b.Now()

		_, err = pollWithin(t, q, 100*time.Millisecond)
		require.ErrorIs(t, err, context.DeadlineExceeded, "not due yet")
		ready, delayed, inflight, dead, err := q.Len(ctx)
		require.NoError(t, err)
		assert.Equal(t, [4]int64{0, 1, 0, 0}, [4]int64{ready, delayed, inflight, dead})

		b.Advance(delay)
		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		delivered := b.Now()
		assert.Equal(t, id, m.ID)
		assert.Equal(t, payload, m.Payload)
		assert.Equal(t, 1, m.Attempt)
		assert.False(t, m.DueAt.Before(before.Truncate(time.Millisecond).Add(delay)), "due %v, pushed after %v", m.DueAt, before)
		assert.False(t, m.DueAt.After(after.Add(delay)), "due %v, pushed before %v", m.DueAt, after)
		assert.False(t, m.DueAt.After(delivered), "delivered before due")
		// The lease lapses Visibility after delivery, which came after the
		// message was due and before the clock was read.
		assert.False(t, m.Deadline.Before(m.DueAt.Add(time.Minute)), "deadline %v, due %v", m.Deadline, m.DueAt)
		assert.False(t, m.Deadline.After(delivered.Add(time.Minute)), "deadline %v, delivered by %v", m.Deadline, delivered)

		ready, delayed, inflight, dead, err = q.Len(ctx)
		require.NoError(t, err)
		assert.Equal(t, [4]int64{0, 0, 1, 0}, [4]int64{ready, delayed, inflight, dead})
		require.NoError(t, q.Ack(ctx, m))
		assert.NoError(t, q.Ack(ctx, m), "a repeat before the deadline answers as the Ack did")
		late := m // as a repeat after the deadline would be
		late.Deadline = delivered.Add(-time.Second)
		assert.ErrorIs(t, q.Ack(ctx, late), delayqueue.ErrNotHeld, "a repeat after the deadline: the safe direction")
		assert.Empty(t, existing(t, b, key), "an empty queue leaves no keys")
	})
}

// Messages due at the same millisecond come out in push order, whether
// pushed in one batch or one by one with the same due time.
func TestSameMillisecondInPushOrder(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := newQueue(t, b, time.Minute, 0)
		at := b.Now().Add(50 * time.Millisecond)
		var want []string
		jobs := make([]delayqueue.Job, 200)
		for i := range jobs {
			jobs[i] = delayqueue.Job{Payload: []byte{byte(i)}, At: at}
		}
		ids, err := q.PushBatch(ctx, jobs)
		require.NoError(t, err)
		want = append(want, ids...)
		for i := range 50 {
			id, err := q.PushAt(ctx, []byte{byte(i)}, at)
			require.NoError(t, err)
			want = append(want, id)
		}
		b.Advance(60 * time.Millisecond)
		var got []string
		for range want {
			m, err := pollWithin(t, q, deliveredWithin)
			require.NoError(t, err)
			assert.Equal(t, at.UnixMilli(), m.DueAt.UnixMilli())
			got = append(got, m.ID)
			require.NoError(t, q.Ack(ctx, m))
		}
		assert.Equal(t, want, got)
	})
}
