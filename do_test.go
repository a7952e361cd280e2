package slotlimit_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// Do holds its units while fn runs, keeps them alive past the TTL, and
// frees them when fn returns, with fn's error. fn waits until the
// server's clock is past the lease's first deadline, then past the
// deadline a renewal gave it; the TTL leaves a renewal a second of
// lateness, which a busy machine's scheduler does not reach.
func TestDoHoldsWhileWorkRuns(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		if !b.Real {
			t.Skip("renewals are timed on the local clock")
		}
		ctx := context.Background()
		const ttl = 1500 * time.Millisecond
		l := newLimiter(t, b, testKey(t, b), 2, ttl)
		errWork := errors.New("work failed")
		err := l.Do(ctx, 2, func(ctx context.Context) error {
			n, err := l.Count(ctx)
			require.NoError(t, err)
			assert.Equal(t, int64(2), n, "the units are held while fn runs")
			hs, err := l.Holders(ctx)
			require.NoError(t, err)
			require.Len(t, hs, 1)
			holder, deadline := hs[0].ID, hs[0].ExpiresAt
			for i := range 2 { // past the TTL: KeepAlive renews
				waitServerPast(t, b, deadline, 10*time.Second)
				n, err = l.Count(ctx)
				require.NoError(t, err)
				assert.Equal(t, int64(2), n, "still held past deadline %d", i)
				next := holderDeadline(t, l, holder)
				assert.True(t, next.After(deadline), "renewed: deadline %d was %v, now %v", i, deadline, next)
				deadline = next
			}
			assert.NoError(t, ctx.Err())
			return errWork
		})
		assert.ErrorIs(t, err, errWork)
		assert.NotErrorIs(t, err, slotlimit.ErrNotHeld)
		assert.Empty(t, holderIDs(t, l), "released when fn returns")
	})
}

// Do waits for the units, and a ctx that ends first returns ctx's error
// without running fn.
func TestDoWaitsAndHonoursContext(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		l := newLimiter(t, b, testKey(t, b), 1, time.Minute)
		res, err := l.TryAcquire(ctx, "other")
		require.NoError(t, err)
		require.True(t, res.Acquired)

		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		var ran atomic.Bool
		err = l.Do(short, 1, func(context.Context) error { ran.Store(true); return nil })
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.False(t, ran.Load(), "fn does not run without its units")

		done := make(chan error, 1)
		go func() { done <- l.Do(ctx, 1, func(context.Context) error { ran.Store(true); return nil }) }()
		time.Sleep(50 * time.Millisecond)
		err = l.Release(ctx, "other")
		require.NoError(t, err)
		select {
		case err := <-done:
			assert.NoError(t, err)
			assert.True(t, ran.Load())
		case <-time.After(5 * time.Second):
			t.Fatal("Do did not get the released slot")
		}
		assert.Empty(t, holderIDs(t, l))
	})
}

// When the lease is lost while fn runs, fn's context is cancelled with
// cause ErrNotHeld and Do's error says so.
func TestDoReportsLostLease(t *testing.T) {
	b := newRealRedis(t)
	ctx := context.Background()
	key := testKey(t, b)
	l := newLimiter(t, b, key, 1, 300*time.Millisecond)
	err := l.Do(ctx, 1, func(work context.Context) error {
		require.NoError(t, b.Client.Del(ctx, key).Err()) // the lease is gone
		select {
		case <-work.Done():
			assert.ErrorIs(t, context.Cause(work), slotlimit.ErrNotHeld)
		case <-time.After(5 * time.Second):
			t.Error("the work's context outlived its lease")
		}
		return nil
	})
	assert.ErrorIs(t, err, slotlimit.ErrNotHeld)
}

// Do releases its units when fn panics, and lets the panic go on.
func TestDoReleasesOnPanic(t *testing.T) {
	b := newMiniredis(t)
	l := newLimiter(t, b, testKey(t, b), 1, time.Minute)
	assert.PanicsWithValue(t, "boom", func() {
		l.Do(context.Background(), 1, func(context.Context) error { panic("boom") }) //nolint:errcheck
	})
	assert.Empty(t, holderIDs(t, l))
}

// RetryAfter suits a Retry-After header: at most a second, never 0 when
// refused, while EarliestLapse is the time until the earliest lease lapses.
func TestRetryAfterSuitsHTTP(t *testing.T) {
	for i, step := range []struct {
		res  slotlimit.Result
		want time.Duration
	}{
		{slotlimit.Result{Acquired: true}, 0},
		{slotlimit.Result{EarliestLapse: 10 * time.Second}, time.Second},
		{slotlimit.Result{EarliestLapse: 250 * time.Millisecond}, 250 * time.Millisecond},
		{slotlimit.Result{}, time.Second}, // no lapse scheduled
	} {
		assert.Equal(t, step.want, step.res.RetryAfter(), "step %d", i)
	}

	b := newMiniredis(t)
	ctx := context.Background()
	l := newLimiter(t, b, testKey(t, b), 1, 10*time.Second)
	_, err := l.TryAcquire(ctx, "d1")
	require.NoError(t, err)
	res, err := l.TryAcquire(ctx, "d2")
	require.NoError(t, err)
	require.False(t, res.Acquired)
	assert.Equal(t, 10*time.Second, res.EarliestLapse)
	assert.Equal(t, "1", strconv.Itoa(int(math.Ceil(res.RetryAfter().Seconds()))), "the header value")
}
