package slotlimit_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/observe/observetest"

	"github.com/slotlimit/slotlimit/observe"
)

// newObserved returns a Limiter of limit 2 on a key of the test's own on
// b, reporting to a Recorder.
func newObserved(t *testing.T, b *backend, ttl time.Duration) (*slotlimit.Limiter, *observetest.Recorder) {
	t.Helper()
	rec := &observetest.Recorder{}
	l, err := slotlimit.New(b.Client, slotlimit.Config{Key: testKey(t, b), Limit: 2, TTL: ttl, Observer: rec})
	require.NoError(t, err)
	return l, rec
}

// one asserts that events holds exactly one event, of kind, from call op
// by holder, and returns it.
func one(t *testing.T, events []observe.Event, kind observe.Kind, op, holder string) observe.Event {
	t.Helper()
	require.Len(t, events, 1, "%v", events)
	e := events[0]
	assert.Equal(t, kind, e.Kind)
	assert.Equal(t, "slotlimit", e.Package)
	assert.Equal(t, op, e.Op)
	assert.Equal(t, holder, e.Holder)
	assert.Positive(t, e.Duration)
	assert.WithinDuration(t, time.Now(), e.Start, 5*time.Second)
	return e
}

// Each call reports one final event, with the units, the units in use,
// the limit and whether the lease was live, right as it returns.
func TestObserverReportsEachCallOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		l, rec := newObserved(t, b, time.Minute)
		key := l.Config().Key

		_, err := l.TryAcquire(ctx, "a")
		require.NoError(t, err)
		e := one(t, rec.Take(), observe.Acquired, "TryAcquire", "a")
		assert.Equal(t, key, e.Key)
		assert.Equal(t, int64(1), e.Units)
		assert.Equal(t, int64(1), e.InUse)
		assert.Equal(t, int64(2), e.Limit)

		_, err = l.TryAcquireN(ctx, "b", 1)
		require.NoError(t, err)
		assert.Equal(t, int64(2), one(t, rec.Take(), observe.Acquired, "TryAcquireN", "b").InUse)

		res, err := l.TryAcquire(ctx, "c")
		require.NoError(t, err)
		require.False(t, res.Acquired)
		assert.Equal(t, int64(2), one(t, rec.Take(), observe.Refused, "TryAcquire", "c").InUse)

		err = l.Renew(ctx, "a")
		require.NoError(t, err)
		assert.True(t, one(t, rec.Take(), observe.Renewed, "Renew", "a").Held)
		err = l.Renew(ctx, "c")
		require.ErrorIs(t, err, slotlimit.ErrNotHeld)
		assert.False(t, one(t, rec.Take(), observe.Renewed, "Renew", "c").Held)

		err = l.Release(ctx, "a")
		require.NoError(t, err)
		assert.True(t, one(t, rec.Take(), observe.Released, "Release", "a").Held)
		err = l.Release(ctx, "a")
		require.ErrorIs(t, err, slotlimit.ErrNotHeld)
		assert.False(t, one(t, rec.Take(), observe.Released, "Release", "a").Held)

		_, err = l.Acquire(ctx, "d") // a slot is free: no wait
		require.NoError(t, err)
		assert.Equal(t, int64(2), one(t, rec.Take(), observe.Acquired, "Acquire", "d").InUse)

		// Bad input reaches no Redis and reports nothing.
		_, err = l.TryAcquire(ctx, "")
		require.Error(t, err)
		assert.Empty(t, rec.Take())
	})
}

// An Acquire that waits reports, once each and in order, Waited (from its
// first refusal), HandedOver (from the release that handed it the slot)
// and Acquired; the release reports Released.
func TestObserverReportsWaitAndHandOver(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		l, rec := newObserved(t, b, time.Minute)
		for _, h := range []string{"a", "b"} {
			_, err := l.TryAcquire(ctx, h)
			require.NoError(t, err)
		}
		rec.Take()

		const hold = 200 * time.Millisecond
		released := make(chan time.Time, 1)
		go func() {
			time.Sleep(hold)
			l.Release(ctx, "a") //nolint:errcheck // checked by the events
			released <- time.Now()
		}()
		start := time.Now()
		res, err := l.Acquire(ctx, "w")
		require.NoError(t, err)
		returned := time.Now()
		require.True(t, res.Acquired)
		<-released

		var waiter []observe.Event
		var release []observe.Event
		for _, e := range rec.Take() {
			if e.Holder == "w" {
				waiter = append(waiter, e)
			} else {
				release = append(release, e)
			}
		}
		require.Equal(t, []observe.Kind{observe.Waited, observe.HandedOver, observe.Acquired},
			observetest.Kinds(waiter), "%v", waiter)
		one(t, release, observe.Released, "Release", "a")

		waited := waiter[0]
		assert.Equal(t, "Acquire", waited.Op)
		assert.GreaterOrEqual(t, waited.Duration, hold-50*time.Millisecond, "waited from the first refusal to the hand-over")
		assert.LessOrEqual(t, waited.Duration, returned.Sub(start))
		if b.Real {
			// The release's time is the server's; this host's clock is the
			// server's too.
			handed := waiter[1]
			assert.GreaterOrEqual(t, handed.Duration, time.Duration(0))
			assert.Less(t, handed.Duration, time.Second, "from the release to the return, not from some other time")
		}
		acquired := waiter[2]
		assert.Equal(t, int64(2), acquired.InUse)
		assert.LessOrEqual(t, acquired.Duration, returned.Sub(start), "the call's own duration")
		assert.GreaterOrEqual(t, acquired.Duration, waited.Duration, "which includes its wait")
	})
}

// A failed call reports Error with its error; a Lease that is found gone
// reports LeaseLost once.
func TestObserverReportsErrorsAndLostLeases(t *testing.T) {
	ctx := context.Background()
	rec := &observetest.Recorder{}
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { down.Close() })
	l, err := slotlimit.New(down, slotlimit.Config{Key: "k", Limit: 1, Observer: rec})
	require.NoError(t, err)
	_, err = l.TryAcquire(ctx, "a")
	require.Error(t, err)
	e := one(t, rec.Take(), observe.Error, "TryAcquire", "a")
	assert.Equal(t, err, e.Err)

	b := newMiniredis(t)
	l, rec = newObserved(t, b, 3*time.Second)
	lease, err := l.AcquireLease(ctx, 1)
	require.NoError(t, err)
	work := lease.KeepAlive(ctx)
	rec.Take()
	require.NoError(t, b.Client.Del(ctx, l.Config().Key).Err()) // the lease is gone
	select {
	case <-work.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the lease was not found lost")
	}
	var lost []observe.Event
	for _, e := range rec.Take() {
		if e.Kind == observe.LeaseLost {
			lost = append(lost, e)
		}
	}
	require.Len(t, lost, 1)
	assert.Equal(t, lease.Holder(), lost[0].Holder)
	assert.ErrorIs(t, lost[0].Err, slotlimit.ErrNotHeld)
}

// observe.Slog logs a failed call and a lost lease at Warn, the rest at
// Debug, with the call's details.
func TestSlogObserver(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	obs := observe.Slog(logger)
	ctx := context.Background()
	obs.Observe(ctx, observe.Event{Kind: observe.Acquired, Package: "slotlimit", Op: "TryAcquire", Key: "k", Holder: "h", Units: 1, InUse: 1, Limit: 2})
	assert.Empty(t, buf.String(), "Debug is below the handler's level")
	obs.Observe(ctx, observe.Event{Kind: observe.Error, Package: "slotlimit", Op: "Release", Key: "ar:1", Holder: "d7", InUse: -1, Err: assert.AnError})
	line := buf.String()
	for _, want := range []string{"level=WARN", `msg="slotlimit: error"`, "op=Release", "key=ar:1", "holder=d7", "error="} {
		assert.Contains(t, line, want)
	}
	buf.Reset()
	obs.Observe(ctx, observe.Event{Kind: observe.LeaseLost, Package: "lock", Key: "l", Holder: "t", InUse: -1})
	assert.True(t, strings.HasPrefix(buf.String(), "time="), buf.String())
	assert.Contains(t, buf.String(), `msg="lock: lease_lost"`)
}

// A Counter reports each call's outcome once too: Acquired or Refused for
// TryAcquire and Acquire, Released with Held for Release, and Error for
// a call that failed after it was sent.
func TestObserverReportsCounterCalls(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		rec := &observetest.Recorder{}
		c, err := slotlimit.NewCounter(b.Client, slotlimit.Config{Key: testKey(t, b), Limit: 1, TTL: time.Minute, Observer: rec})
		require.NoError(t, err)

		_, err = c.TryAcquire(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), one(t, rec.Take(), observe.Acquired, "TryAcquire", "").InUse)
		res, err := c.TryAcquire(ctx)
		require.NoError(t, err)
		require.False(t, res.Acquired)
		assert.Equal(t, int64(1), one(t, rec.Take(), observe.Refused, "TryAcquire", "").InUse)

		require.NoError(t, c.Release(ctx))
		assert.True(t, one(t, rec.Take(), observe.Released, "Release", "").Held)
		require.ErrorIs(t, c.Release(ctx), slotlimit.ErrNotHeld)
		assert.False(t, one(t, rec.Take(), observe.Released, "Release", "").Held)

		_, err = c.Acquire(ctx)
		require.NoError(t, err)
		one(t, rec.Take(), observe.Acquired, "Acquire", "")

		done, cancel := context.WithCancel(ctx)
		cancel()
		_, err = c.Acquire(done)
		require.ErrorIs(t, err, context.Canceled)
		one(t, rec.Take(), observe.Error, "Acquire", "")
	})
}

// A batch reports each holder's outcome as its single call would, and a
// batch refused before it was sent reports nothing.
func TestObserverReportsBatchesPerHolder(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		l, rec := newObserved(t, b, time.Minute) // limit 2

		_, err := l.TryAcquireBatch(ctx, []string{"a", "b", "c"})
		require.NoError(t, err)
		events := rec.Take()
		require.Len(t, events, 3)
		for i, want := range []struct {
			holder string
			kind   observe.Kind
			inUse  int64
		}{{"a", observe.Acquired, 1}, {"b", observe.Acquired, 2}, {"c", observe.Refused, 2}} {
			e := events[i]
			assert.Equal(t, want.kind, e.Kind, want.holder)
			assert.Equal(t, "TryAcquireBatch", e.Op)
			assert.Equal(t, want.holder, e.Holder)
			assert.Equal(t, int64(1), e.Units)
			assert.Equal(t, want.inUse, e.InUse, want.holder)
			assert.Positive(t, e.Duration)
		}

		_, err = l.ReleaseBatch(ctx, []string{"a", "c"})
		require.NoError(t, err)
		events = rec.Take()
		require.Len(t, events, 2)
		assert.Equal(t, []observe.Kind{observe.Released, observe.Released}, observetest.Kinds(events))
		assert.Equal(t, "ReleaseBatch", events[0].Op)
		assert.True(t, events[0].Held, "a held a lease")
		assert.False(t, events[1].Held, "c held none")

		_, err = l.TryAcquireBatch(ctx, []string{"d", ""})
		require.ErrorIs(t, err, slotlimit.ErrInvalidHolder)
		assert.Empty(t, rec.Take(), "a batch refused before it was sent reports nothing")
	})
}
