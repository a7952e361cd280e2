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

// A lapsed lease makes the message due again, delivered with Attempt+1
// and DueAt when the lease lapsed; the old delivery can no longer Ack,
// Nack or Extend it. Extend keeps a lease alive past its Visibility, and
// Nack gives a message back due after its delay.
func TestLeaseLapsesExtendsAndNacks(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		const vis = 200 * time.Millisecond
		q := newQueue(t, b, vis, 0)
		_, err := q.Push(ctx, []byte("job"), 0)
		require.NoError(t, err)
		first, err := pollWithin(t, q, time.Second)
		require.NoError(t, err)
		_, err = pollWithin(t, q, 50*time.Millisecond)
		require.ErrorIs(t, err, context.DeadlineExceeded, "in flight: no other Poll gets it while its lease lives")

		b.Advance(vis + 10*time.Millisecond)
		second, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		assert.Equal(t, first.ID, second.ID)
		assert.Equal(t, 2, second.Attempt)
		assert.Equal(t, first.Deadline, second.DueAt, "due again when its lease lapsed")
		for op, call := range map[string]func() error{
			"ack":    func() error { return q.Ack(ctx, first) },
			"nack":   func() error { return q.Nack(ctx, first, 0) },
			"extend": func() error { return q.Extend(ctx, first) },
		} {
			assert.ErrorIs(t, call(), delayqueue.ErrNotHeld, op)
		}

		// Extend, twice, past the first deadline.
		for range 2 {
			b.Advance(vis / 2)
			require.NoError(t, q.Extend(ctx, second))
		}
		b.Advance(vis / 2)
		_, err = pollWithin(t, q, 50*time.Millisecond)
		require.ErrorIs(t, err, context.DeadlineExceeded, "the extended lease still lives")

		require.NoError(t, q.Nack(ctx, second, 100*time.Millisecond))
		_, err = pollWithin(t, q, 50*time.Millisecond)
		require.ErrorIs(t, err, context.DeadlineExceeded, "given back, not due yet")
		b.Advance(100 * time.Millisecond)
		third, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		assert.Equal(t, 3, third.Attempt)
		require.NoError(t, q.Ack(ctx, third))
	})
}

// A message whose MaxAttempts-th lease lapses, or that is given back on
// its MaxAttempts-th delivery, lands in the dead letters; they can be
// read, requeued with their attempts counted anew, and dropped, after
// which the queue leaves no keys.
func TestPoisonGoesToDeadLetters(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		const vis, maxAttempts = 100 * time.Millisecond, 3
		q := newQueue(t, b, vis, maxAttempts)
		lapsing, err := q.Push(ctx, []byte("lapses"), 0)
		require.NoError(t, err)
		failing, err := q.Push(ctx, []byte("fails"), 0)
		require.NoError(t, err)
		for attempt := 1; attempt <= maxAttempts; attempt++ {
			for range 2 {
				m, err := pollWithin(t, q, deliveredWithin)
				require.NoError(t, err)
				require.Equal(t, attempt, m.Attempt)
				if m.ID == failing {
					require.NoError(t, q.Nack(ctx, m, 0))
				}
			}
			b.Advance(vis + 10*time.Millisecond)
		}
		_, err = pollWithin(t, q, 100*time.Millisecond) // gives the lapsed lease back: to the dead letters
		require.ErrorIs(t, err, context.DeadlineExceeded)
		ready, delayed, inflight, dead, err := q.Len(ctx)
		require.NoError(t, err)
		assert.Equal(t, [4]int64{0, 0, 0, 2}, [4]int64{ready, delayed, inflight, dead})

		letters, err := q.DeadLetters(ctx, 10)
		require.NoError(t, err)
		require.Len(t, letters, 2)
		byID := map[string]delayqueue.Message{}
		for _, m := range letters {
			byID[m.ID] = m
			assert.Equal(t, maxAttempts, m.Attempt)
			assert.True(t, m.Deadline.IsZero())
		}
		assert.Equal(t, []byte("lapses"), byID[lapsing].Payload)
		assert.Equal(t, []byte("fails"), byID[failing].Payload)

		n, err := q.Requeue(ctx, failing, "no-such-id")
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		assert.Equal(t, failing, m.ID)
		assert.Equal(t, 1, m.Attempt, "requeued with its attempts counted anew")
		require.NoError(t, q.Ack(ctx, m))

		n, err = q.Drop(ctx, lapsing, failing)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		assert.Empty(t, existing(t, b, q.Config().Key), "an empty queue leaves no keys")
	})
}

// A delivery is named by a token no requeue repeats: once a message is
// dead-lettered and requeued, its attempts counted from 1 again, the
// lapsed or settled holder of its earlier delivery cannot Ack, Extend or
// Nack the new one, whose holder keeps it.
func TestStaleDeliveryCannotActOnRequeuedOne(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		const vis = 200 * time.Millisecond
		for _, how := range []string{"lapsed", "nacked"} {
			q := newQueue(t, b, vis, 1)
			id, err := q.Push(ctx, []byte("job"), 0)
			require.NoError(t, err)
			stale, err := pollWithin(t, q, time.Second)
			require.NoError(t, err)
			if how == "lapsed" {
				b.Advance(vis + 10*time.Millisecond)
				_, err = pollWithin(t, q, 50*time.Millisecond) // gives it to the dead letters
				require.ErrorIs(t, err, context.DeadlineExceeded, how)
			} else {
				require.NoError(t, q.Nack(ctx, stale, 0), how)
			}
			n, err := q.Requeue(ctx, id)
			require.NoError(t, err)
			require.Equal(t, 1, n, how)
			live, err := pollWithin(t, q, time.Second)
			require.NoError(t, err)
			require.Equal(t, id, live.ID, how)
			require.Equal(t, stale.Attempt, live.Attempt, "%s: the attempt number repeats", how)

			assert.ErrorIs(t, q.Ack(ctx, stale), delayqueue.ErrNotHeld, how)
			assert.ErrorIs(t, q.Extend(ctx, stale), delayqueue.ErrNotHeld, how)
			err = q.Nack(ctx, stale, 0)
			if how == "lapsed" {
				assert.ErrorIs(t, err, delayqueue.ErrNotHeld, how)
			} else {
				// A repeat of its own Nack, before its deadline: it
				// answers as the Nack did, and does nothing.
				assert.NoError(t, err, how)
			}
			ready, delayed, inflight, dead, err := q.Len(ctx)
			require.NoError(t, err)
			assert.Equal(t, [4]int64{0, 0, 1, 0}, [4]int64{ready, delayed, inflight, dead}, "%s: the live delivery is still in flight", how)
			require.NoError(t, q.Extend(ctx, live), how)
			require.NoError(t, q.Ack(ctx, live), how)
		}
	})
}

// Queues of one Key with different Visibility share the leases: a short
// lease taken, or renewed, after a long one still lapses on time, and its
// message is delivered again.
func TestShortLeaseAfterLongOneLapses(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		const short = 200 * time.Millisecond
		long := newQueue(t, b, time.Minute, 0)
		quick := newQueueOn(t, b.Client, delayqueue.Config{Key: long.Config().Key, Visibility: short})
		for _, p := range []string{"one", "two"} {
			_, err := long.Push(ctx, []byte(p), 0)
			require.NoError(t, err)
		}
		held, err := pollWithin(t, long, time.Second)
		require.NoError(t, err)
		taken, err := pollWithin(t, quick, time.Second)
		require.NoError(t, err)

		b.Advance(short + 50*time.Millisecond)
		again, err := pollWithin(t, long, deliveredWithin)
		require.NoError(t, err, "the short lease, taken after the long one, lapsed")
		assert.Equal(t, taken.ID, again.ID)
		assert.Equal(t, 2, again.Attempt)
		require.NoError(t, long.Ack(ctx, again))

		require.NoError(t, quick.Extend(ctx, held), "renewed to the short Visibility")
		b.Advance(short + 50*time.Millisecond)
		again, err = pollWithin(t, long, deliveredWithin)
		require.NoError(t, err, "the long lease, renewed short, lapsed")
		assert.Equal(t, held.ID, again.ID)
		assert.Equal(t, 2, again.Attempt)
		require.NoError(t, long.Ack(ctx, again))
		assert.Empty(t, existing(t, b, long.Config().Key), "an empty queue leaves no keys")
	})
}
