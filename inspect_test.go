package slotlimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// waitForQueue waits until l's queue holds n live entries, and returns the
// snapshot that showed them.
func waitForQueue(t *testing.T, l *slotlimit.Limiter, n int) slotlimit.Snapshot {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		snap, err := l.Inspect(context.Background())
		require.NoError(t, err)
		if len(snap.Queue) == n || time.Now().After(deadline) {
			require.Len(t, snap.Queue, n, "queue entries")
			return snap
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Inspect shows, at one moment and on the server's clock, what Count and
// Holders show, and the queue, with what each waiter wants; it writes
// nothing.
func TestInspectShowsLeasesAndQueue(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		l := newLimiter(t, b, key, 5, time.Minute)

		before := b.Now()
		snap, err := l.Inspect(ctx)
		require.NoError(t, err)
		after := b.Now()
		assert.Zero(t, snap.InUse)
		assert.Empty(t, snap.Holders)
		assert.Empty(t, snap.Queue)
		// The server's clock, in ms, as it ran between the two readings.
		assert.False(t, snap.ServerTime.Before(before.Truncate(time.Millisecond)), "the server's clock: %v, read after %v", snap.ServerTime, before)
		assert.False(t, snap.ServerTime.After(after), "the server's clock: %v, read before %v", snap.ServerTime, after)

		_, err = l.TryAcquire(ctx, "one")
		require.NoError(t, err)
		_, err = l.TryAcquireN(ctx, "three", 3)
		require.NoError(t, err)

		waiter, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 5, TTL: 2 * time.Minute})
		require.NoError(t, err)
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := waiter.AcquireN(wctx, "two", 2) // 1 unit free: it waits
			done <- err
		}()
		snap = waitForQueue(t, l, 1)

		assert.Equal(t, int64(4), snap.InUse)
		n, err := l.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, n, snap.InUse, "as Count")
		holders, err := l.Holders(ctx)
		require.NoError(t, err)
		assert.Equal(t, holders, snap.Holders, "as Holders")
		for _, h := range snap.Holders {
			left := h.ExpiresAt.Sub(snap.ServerTime)
			assert.True(t, left > 0 && left <= time.Minute, "%s: %v left", h.ID, left)
		}

		w := snap.Queue[0]
		assert.Equal(t, "two", w.ID)
		assert.Equal(t, int64(2), w.Units)
		assert.Equal(t, int64(5), w.Limit)
		assert.Equal(t, 2*time.Minute, w.TTL)
		assert.Positive(t, w.Arrival)
		left := w.EntryExpiresAt.Sub(snap.ServerTime)
		assert.True(t, left > 0 && left <= 3*time.Second, "entry lapses in %v", left)

		// A release hands the waiter its units; the snapshot follows.
		err = l.Release(ctx, "three")
		require.NoError(t, err)
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("the waiter was not handed its units")
		}
		snap, err = l.Inspect(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(3), snap.InUse)
		assert.Empty(t, snap.Queue)
	})
}

// Limits reads the limit from the record a Limiter keeps beside its key,
// and the limits of queued waiters; for a key with no Limiter's record (as
// one last used by a release that kept none) it finds the limit in a full
// key's marker instead.
func TestLimitsFoundInRecordMarkersAndWaiters(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		record := "{" + key + "}/limit"
		limits, err := slotlimit.Limits(ctx, b.Client, key)
		require.NoError(t, err)
		assert.Empty(t, limits, "nothing in Redis")

		l := newLimiter(t, b, key, 2, time.Minute)
		_, err = l.TryAcquire(ctx, "a")
		require.NoError(t, err)
		limits, err = slotlimit.Limits(ctx, b.Client, key)
		require.NoError(t, err)
		assert.Equal(t, []int64{2}, limits, "the record, while the key is not full and nobody waits")

		// A key with no record: the limit is in the full marker alone.
		require.NoError(t, b.Client.Del(ctx, record).Err())
		limits, err = slotlimit.Limits(ctx, b.Client, key)
		require.NoError(t, err)
		assert.Empty(t, limits, "no record, not full, nobody waits: the limit is nowhere")
		_, err = l.TryAcquire(ctx, "b")
		require.NoError(t, err)
		limits, err = slotlimit.Limits(ctx, b.Client, key)
		require.NoError(t, err)
		assert.Equal(t, []int64{2}, limits, "the full marker")

		// A waiter under a higher limit, as in a rolling change: the key
		// is full for it too once it holds nothing it can have. Its
		// Limiter's first try writes the record, the last writer's.
		wider, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 3, TTL: time.Minute})
		require.NoError(t, err)
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan struct{})
		go func() {
			defer close(done)
			wider.AcquireN(wctx, "c", 2) //nolint:errcheck // ended by cancel
		}()
		waitForQueue(t, l, 1)
		limits, err = slotlimit.Limits(ctx, b.Client, key)
		require.NoError(t, err)
		assert.Equal(t, []int64{3}, limits, "the record and the waiter's, both the wider Limiter's")
		require.NoError(t, b.Client.Del(ctx, record).Err())
		limits, err = slotlimit.Limits(ctx, b.Client, key)
		require.NoError(t, err)
		assert.Equal(t, []int64{2, 3}, limits, "with no record, the marker's and the waiter's")
		cancel()
		<-done

		_, err = slotlimit.Limits(ctx, b.Client, "a}b")
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig)
		_, err = slotlimit.Limits(ctx, nil, key)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig)
	})
}

// Limits reads the marker of a key whose name holds SCAN's wildcards as
// that key's alone.
func TestLimitsEscapesWildcards(t *testing.T) {
	b := newMiniredis(t)
	ctx := context.Background()
	for _, key := range []string{"ar*", "ar?x", "ar[1]"} {
		l := newLimiter(t, b, key, 1, time.Minute)
		_, err := l.TryAcquire(ctx, "a")
		require.NoError(t, err)
	}
	other := newLimiter(t, b, "arz", 7, time.Minute)
	_, err := other.TryAcquire(ctx, "a")
	require.NoError(t, err)
	other2 := newLimiter(t, b, "ar1", 7, time.Minute)
	for _, h := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		_, err := other2.TryAcquire(ctx, h)
		require.NoError(t, err)
	}
	limits, err := slotlimit.Limits(ctx, b.Client, "ar*")
	require.NoError(t, err)
	assert.Equal(t, []int64{1}, limits)
}
