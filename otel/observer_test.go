package slotlimitotel_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/lock"
	slotlimitotel "github.com/slotlimit/slotlimit/otel"

	"github.com/slotlimit/slotlimit/observe"
)

// set renders the attributes kv (names and values, in pairs; a name
// without a dot is under "slotlimit.") as attrs does.
func set(kv ...any) string {
	var kvs []attribute.KeyValue
	for i := 0; i < len(kv); i += 2 {
		name := kv[i].(string)
		if name != "error.type" {
			name = "slotlimit." + name
		}
		switch v := kv[i+1].(type) {
		case string:
			kvs = append(kvs, attribute.String(name, v))
		case bool:
			kvs = append(kvs, attribute.Bool(name, v))
		}
	}
	return attrs(attribute.NewSet(kvs...))
}

func newLimiter(t *testing.T, h *harness, key string, limit int64) *slotlimit.Limiter {
	t.Helper()
	client, _ := newRedis(t)
	l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: limit, TTL: time.Minute, Observer: h.obs})
	require.NoError(t, err)
	return l
}

// Each call counts once in slotlimit.calls and slotlimit.call.duration,
// by package, operation and outcome (and held, for a release or a
// renewal); a refusal counts in slotlimit.refusals too; the units in use
// are the last a call found; no metric carries the key.
func TestMetricsCountEachCallByOutcome(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	l := newLimiter(t, h, "ar:0571", 2)

	for _, holder := range []string{"a", "b", "c"} { // c is refused
		_, err := l.TryAcquire(ctx, holder)
		require.NoError(t, err)
	}
	require.NoError(t, l.Renew(ctx, "a"))
	require.ErrorIs(t, l.Renew(ctx, "c"), slotlimit.ErrNotHeld, "c holds nothing")
	require.NoError(t, l.Release(ctx, "a"))
	require.ErrorIs(t, l.Release(ctx, "a"), slotlimit.ErrNotHeld, "the second finds nothing")
	_, err := l.Acquire(ctx, "d") // a slot is free: no wait
	require.NoError(t, err)

	m := h.collect(t)
	want := map[string]int64{
		set("package", "slotlimit", "operation", "TryAcquire", "outcome", "acquired"):             2,
		set("package", "slotlimit", "operation", "TryAcquire", "outcome", "refused"):              1,
		set("package", "slotlimit", "operation", "Renew", "outcome", "renewed", "held", true):     1,
		set("package", "slotlimit", "operation", "Renew", "outcome", "renewed", "held", false):    1,
		set("package", "slotlimit", "operation", "Release", "outcome", "released", "held", true):  1,
		set("package", "slotlimit", "operation", "Release", "outcome", "released", "held", false): 1,
		set("package", "slotlimit", "operation", "Acquire", "outcome", "acquired"):                1,
	}
	assert.Equal(t, want, m.sums(t, "slotlimit.calls", "{call}"))
	durations := m.histograms(t, "slotlimit.call.duration", "s")
	require.Len(t, durations, len(want))
	for a, n := range want {
		p := durations[a]
		assert.Equal(t, uint64(n), p.Count, a)
		assert.Positive(t, p.Sum, a)
		assert.Less(t, p.Sum, 5.0, a)
	}
	assert.Equal(t, map[string]int64{set("package", "slotlimit", "operation", "TryAcquire"): 1},
		m.sums(t, "slotlimit.refusals", "{call}"))
	assert.Equal(t, map[string]int64{set("package", "slotlimit"): 2},
		m.gauges(t, "slotlimit.units.in_use", "{unit}"), "b and d")

	// a took 1 of 2, then b, c (refused) and d found 2 of 2.
	util := m.histograms(t, "slotlimit.units.utilization", "1")
	require.Len(t, util, 1)
	p := util[set("package", "slotlimit")]
	assert.Equal(t, []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1}, p.Bounds)
	assert.Equal(t, []uint64{0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 3, 0}, p.BucketCounts)
	assert.InDelta(t, 3.5, p.Sum, 1e-9)

	for _, name := range []string{"slotlimit.errors", "slotlimit.wait.duration", "slotlimit.handover.latency", "slotlimit.leases.lost"} {
		assert.NotContains(t, m, name, "nothing fed it")
	}
	assert.Empty(t, m.keyed(), "the key is opt-in")
}

// WithKeyAttribute puts the key on every metric, so that two Limiters
// make two series; without it they share one.
func TestKeyAttributeIsOptIn(t *testing.T) {
	for _, withKey := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "WithKeyAttribute"}[withKey], func(t *testing.T) {
			ctx := context.Background()
			var opts []slotlimitotel.Option
			if withKey {
				opts = append(opts, slotlimitotel.WithKeyAttribute())
			}
			h := newHarness(t, opts...)
			for _, key := range []string{"ar:1", "ar:2"} {
				l := newLimiter(t, h, key, 5)
				_, err := l.TryAcquire(ctx, "a")
				require.NoError(t, err)
			}
			client := downRedis(t)
			l, err := slotlimit.New(client, slotlimit.Config{Key: "ar:3", Limit: 5, Observer: h.obs})
			require.NoError(t, err)
			err = l.Release(ctx, "a")
			require.Error(t, err)

			m := h.collect(t)
			calls := m.sums(t, "slotlimit.calls", "{call}")
			errs := m.sums(t, "slotlimit.errors", "{error}")
			inUse := m.gauges(t, "slotlimit.units.in_use", "{unit}")
			if !withKey {
				assert.Equal(t, map[string]int64{
					set("package", "slotlimit", "operation", "TryAcquire", "outcome", "acquired"): 2,
					set("package", "slotlimit", "operation", "Release", "outcome", "error"):       1,
				}, calls)
				assert.Equal(t, map[string]int64{set("package", "slotlimit", "operation", "Release", "error.type", "network"): 1}, errs)
				assert.Equal(t, map[string]int64{set("package", "slotlimit"): 1}, inUse)
				assert.Empty(t, m.keyed())
				return
			}
			assert.Equal(t, map[string]int64{
				set("package", "slotlimit", "operation", "TryAcquire", "outcome", "acquired", "key", "ar:1"): 1,
				set("package", "slotlimit", "operation", "TryAcquire", "outcome", "acquired", "key", "ar:2"): 1,
				set("package", "slotlimit", "operation", "Release", "outcome", "error", "key", "ar:3"):       1,
			}, calls)
			assert.Equal(t, map[string]int64{set("package", "slotlimit", "operation", "Release", "error.type", "network", "key", "ar:3"): 1}, errs)
			assert.Equal(t, map[string]int64{
				set("package", "slotlimit", "key", "ar:1"): 1,
				set("package", "slotlimit", "key", "ar:2"): 1,
			}, inUse)
			assert.Equal(t, m.names(), m.keyed(), "every instrument has the key")
		})
	}
}

// Each call is one span, named for the package and the operation, a
// child of the caller's span, from the call's start to its return, with
// the key, the holder and the counts on it.
func TestSpansAreNamedForTheOperation(t *testing.T) {
	h := newHarness(t)
	l := newLimiter(t, h, "ar:0571", 1)
	ctx, caller := h.callerSpan(context.Background())

	before := time.Now()
	_, err := l.TryAcquire(ctx, "a")
	require.NoError(t, err)
	_, err = l.TryAcquire(ctx, "b") // refused
	require.NoError(t, err)
	err = l.Release(ctx, "a")
	require.NoError(t, err)
	after := time.Now()
	caller.End()
	_, err = l.TryAcquire(context.Background(), "c") // no caller span
	require.NoError(t, err)

	spans := h.spans.Ended()
	require.Equal(t, []string{"slotlimit.TryAcquire", "slotlimit.TryAcquire", "slotlimit.Release", "caller", "slotlimit.TryAcquire"},
		names(spans))
	for _, s := range spans[:3] {
		assert.Equal(t, caller.SpanContext().TraceID(), s.SpanContext().TraceID(), s.Name())
		assert.Equal(t, caller.SpanContext().SpanID(), s.Parent().SpanID(), s.Name())
		assert.Equal(t, trace.SpanKindInternal, s.SpanKind())
		assert.Equal(t, codes.Unset, s.Status().Code, s.Name())
		assert.False(t, s.StartTime().Before(before), s.Name())
		assert.True(t, s.EndTime().After(s.StartTime()), s.Name())
		assert.False(t, s.EndTime().After(after), s.Name())
		assert.Equal(t, slotlimitotel.ScopeName, s.InstrumentationScope().Name)
	}
	assert.False(t, spans[1].StartTime().Before(spans[0].EndTime()), "one after the other")
	assert.False(t, spans[4].Parent().IsValid(), "a root span without a caller's")

	assert.Equal(t, map[string]any{
		"slotlimit.package": "slotlimit", "slotlimit.operation": "TryAcquire", "slotlimit.outcome": "acquired",
		"slotlimit.key": "ar:0571", "slotlimit.holder": "a",
		"slotlimit.units": int64(1), "slotlimit.in_use": int64(1), "slotlimit.limit": int64(1),
	}, spanAttrs(spans[0]))
	assert.Equal(t, "refused", spanAttrs(spans[1])["slotlimit.outcome"])
	assert.Equal(t, "b", spanAttrs(spans[1])["slotlimit.holder"])
	assert.Equal(t, map[string]any{
		"slotlimit.package": "slotlimit", "slotlimit.operation": "Release", "slotlimit.outcome": "released",
		"slotlimit.held": true, "slotlimit.key": "ar:0571", "slotlimit.holder": "a", "slotlimit.limit": int64(1),
	}, spanAttrs(spans[2]))
}

// A failed call's span has status Error and the error recorded; the call
// counts as an error, by error.type.
func TestFailedCallIsAnErrorSpan(t *testing.T) {
	h := newHarness(t)
	client := downRedis(t)
	l, err := slotlimit.New(client, slotlimit.Config{Key: "ar:0571", Limit: 1, Observer: h.obs})
	require.NoError(t, err)
	m, err := lock.New(client, lock.Config{Key: "jobs:nightly", Observer: h.obs})
	require.NoError(t, err)
	ctx, caller := h.callerSpan(context.Background())

	_, callErr := l.TryAcquire(ctx, "a")
	require.Error(t, callErr)
	_, lockErr := m.TryLock(ctx)
	require.Error(t, lockErr)
	caller.End()

	spans := h.spans.Ended()
	require.Equal(t, []string{"slotlimit.TryAcquire", "lock.TryLock", "caller"}, names(spans))
	for i, err := range []error{callErr, lockErr} {
		s := spans[i]
		assert.Equal(t, caller.SpanContext().SpanID(), s.Parent().SpanID(), s.Name())
		assert.Equal(t, sdktrace.Status{Code: codes.Error, Description: err.Error()}, s.Status(), s.Name())
		require.Len(t, s.Events(), 1, s.Name())
		assert.Equal(t, "exception", s.Events()[0].Name)
		assert.Contains(t, s.Events()[0].Attributes, attribute.String("exception.message", err.Error()))
		assert.Equal(t, "error", spanAttrs(s)["slotlimit.outcome"])
	}
	assert.Equal(t, "network", spanAttrs(spans[0])["error.type"])
	assert.Equal(t, "network", spanAttrs(spans[1])["error.type"])
	assert.Equal(t, "jobs:nightly", spanAttrs(spans[1])["slotlimit.key"])

	got := h.collect(t)
	assert.Equal(t, map[string]int64{
		set("package", "slotlimit", "operation", "TryAcquire", "outcome", "error"): 1,
		set("package", "lock", "operation", "TryLock", "outcome", "error"):         1,
	}, got.sums(t, "slotlimit.calls", "{call}"))
	assert.Equal(t, map[string]int64{
		set("package", "slotlimit", "operation", "TryAcquire", "error.type", "network"): 1,
		set("package", "lock", "operation", "TryLock", "error.type", "network"):         1,
	}, got.sums(t, "slotlimit.errors", "{error}"))
	assert.NotContains(t, got, "slotlimit.units.in_use", "an error knows no units in use")
}

// A call that ends because its caller's ctx was cancelled or reached its
// deadline (an Acquire or a Lock that gives up waiting, any call of a
// process that shuts down) is not a failure of the system: it counts in
// slotlimit.calls and slotlimit.call.duration under outcome "canceled",
// not in slotlimit.errors, and its span has no error status. A context
// error while the caller's ctx is live still counts as an error.
func TestCallCutShortByItsContextIsNotAnError(t *testing.T) {
	h := newHarness(t)
	client, _ := newRedis(t)
	l, err := slotlimit.New(client, slotlimit.Config{Key: "ar:0571", Limit: 1, TTL: time.Minute, Observer: h.obs})
	require.NoError(t, err)
	m, err := lock.New(client, lock.Config{Key: "jobs:nightly", TTL: time.Minute, Observer: h.obs})
	require.NoError(t, err)
	ctx, caller := h.callerSpan(context.Background())
	_, err = l.TryAcquire(ctx, "a") // takes the one slot
	require.NoError(t, err)
	owner, err := m.TryLock(ctx)
	require.NoError(t, err)

	// An Acquire waits until its deadline; a Lock waits until its caller
	// cancels it; an Acquire is called with a ctx already cancelled.
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	_, acquireErr := l.Acquire(short, "w")
	require.ErrorIs(t, acquireErr, context.DeadlineExceeded)
	cancelled, cancel := context.WithCancel(ctx)
	time.AfterFunc(100*time.Millisecond, cancel)
	_, lockErr := m.Lock(cancelled)
	require.ErrorIs(t, lockErr, context.Canceled)
	_, doneErr := l.Acquire(cancelled, "b") // sends nothing, but reports
	require.ErrorIs(t, doneErr, context.Canceled)
	// A context error that is not the caller's: its ctx is live.
	foreign := fmt.Errorf("slotlimit: release %q: %w", "ar:0571", context.DeadlineExceeded)
	h.obs.Observe(ctx, observe.Event{Kind: observe.Error, Package: "slotlimit", Op: "Release", Key: "ar:0571",
		Holder: "a", InUse: -1, Limit: 1, Start: time.Now(), Err: foreign})
	require.NoError(t, owner.Unlock(ctx))
	caller.End()

	got := h.collect(t)
	assert.Equal(t, map[string]int64{
		set("package", "slotlimit", "operation", "TryAcquire", "outcome", "acquired"):      1,
		set("package", "slotlimit", "operation", "Acquire", "outcome", "canceled"):         2,
		set("package", "slotlimit", "operation", "Release", "outcome", "error"):            1,
		set("package", "lock", "operation", "TryLock", "outcome", "acquired"):              1,
		set("package", "lock", "operation", "Lock", "outcome", "canceled"):                 1,
		set("package", "lock", "operation", "Unlock", "outcome", "released", "held", true): 1,
	}, got.sums(t, "slotlimit.calls", "{call}"))
	assert.Equal(t, map[string]int64{
		set("package", "slotlimit", "operation", "Release", "error.type", "deadline_exceeded"): 1,
	}, got.sums(t, "slotlimit.errors", "{error}"), "only the error whose ctx was live")
	assert.Equal(t, uint64(2), got.counts(t, "slotlimit.call.duration")[set("package", "slotlimit", "operation", "Acquire", "outcome", "canceled")])
	assert.Equal(t, uint64(1), got.counts(t, "slotlimit.wait.duration")[set("package", "lock", "operation", "Lock")],
		"the wait of a Lock cut short is recorded")

	outcomes := map[string]int{}
	for _, s := range h.spans.Ended() {
		a := spanAttrs(s)
		switch s.Name() {
		case "slotlimit.Acquire", "lock.Lock":
			outcomes[s.Name()]++
			assert.Equal(t, "canceled", a["slotlimit.outcome"], s.Name())
			assert.NotContains(t, a, "error.type", s.Name())
			assert.Equal(t, codes.Unset, s.Status().Code, s.Name())
			assert.Empty(t, s.Events(), s.Name())
		case "slotlimit.Release":
			assert.Equal(t, "error", a["slotlimit.outcome"])
			assert.Equal(t, "deadline_exceeded", a["error.type"])
			assert.Equal(t, codes.Error, s.Status().Code)
		}
	}
	assert.Equal(t, map[string]int{"slotlimit.Acquire": 2, "lock.Lock": 1}, outcomes)
}

// An Acquire that waits for a Release records its wait and the
// hand-over's latency, in the histograms and on its span, and keeps
// nothing once its span is made.
func TestWaitAndHandOverAreRecorded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := newHarness(t)
	l := newLimiter(t, h, "ar:0571", 1)
	_, err := l.TryAcquire(ctx, "a")
	require.NoError(t, err)

	const hold = 200 * time.Millisecond
	released := make(chan error, 1)
	go func() {
		time.Sleep(hold)
		released <- l.Release(ctx, "a")
	}()
	traced, caller := h.callerSpan(ctx)
	start := time.Now()
	res, err := l.Acquire(traced, "w")
	took := time.Since(start)
	require.NoError(t, err)
	require.True(t, res.Acquired)
	require.NoError(t, <-released)
	caller.End()
	assert.Zero(t, slotlimitotel.PendingLen(h.obs), "nothing kept past the call")

	m := h.collect(t)
	op := set("package", "slotlimit", "operation", "Acquire")
	waits := m.histograms(t, "slotlimit.wait.duration", "s")
	require.Len(t, waits, 1)
	assert.Equal(t, uint64(1), waits[op].Count)
	assert.GreaterOrEqual(t, waits[op].Sum, (hold - 50*time.Millisecond).Seconds())
	assert.LessOrEqual(t, waits[op].Sum, took.Seconds())
	handovers := m.histograms(t, "slotlimit.handover.latency", "s")
	require.Len(t, handovers, 1)
	assert.Equal(t, uint64(1), handovers[op].Count)
	assert.GreaterOrEqual(t, handovers[op].Sum, 0.0)
	assert.Less(t, handovers[op].Sum, 0.5)
	call := m.histograms(t, "slotlimit.call.duration", "s")[set("package", "slotlimit", "operation", "Acquire", "outcome", "acquired")]
	assert.Equal(t, uint64(1), call.Count)

	var acquire sdktrace.ReadOnlySpan
	for _, s := range h.spans.Ended() {
		if s.Name() == "slotlimit.Acquire" {
			require.Nil(t, acquire, "one span for the call")
			acquire = s
		}
	}
	require.NotNil(t, acquire)
	assert.Equal(t, caller.SpanContext().SpanID(), acquire.Parent().SpanID())
	a := spanAttrs(acquire)
	assert.Equal(t, "w", a["slotlimit.holder"])
	wait, ok := a["slotlimit.wait.duration"].(float64)
	require.True(t, ok, "%v", a)
	assert.InDelta(t, waits[op].Sum, wait, 1e-9)
	handover, ok := a["slotlimit.handover.latency"].(float64)
	require.True(t, ok, "%v", a)
	assert.InDelta(t, handovers[op].Sum, handover, 1e-9)
	assert.InDelta(t, call.Sum, acquire.EndTime().Sub(acquire.StartTime()).Seconds(), 1e-9, "the span lasts the call")
	assert.InDelta(t, took.Seconds(), call.Sum, 0.05)
}

// A lock reports as the Limiter does, under package "lock": spans named
// lock.TryLock, lock.Lock, lock.Refresh and lock.Unlock, and a Lock that
// waited carries its wait.
func TestLockSpansAndMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := newHarness(t)
	client, _ := newRedis(t)
	m, err := lock.New(client, lock.Config{Key: "jobs:nightly", TTL: 10 * time.Second, Observer: h.obs})
	require.NoError(t, err)
	ctx, caller := h.callerSpan(ctx) // before the unlocking goroutine reads ctx

	owner, err := m.TryLock(ctx)
	require.NoError(t, err)
	_, err = m.TryLock(ctx)
	require.ErrorIs(t, err, lock.ErrNotObtained)
	require.NoError(t, owner.Refresh(ctx))
	unlocked := make(chan error, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		unlocked <- owner.Unlock(ctx)
	}()
	waiter, err := m.Lock(ctx)
	require.NoError(t, err)
	require.NoError(t, <-unlocked)
	require.NoError(t, waiter.Unlock(ctx))
	caller.End()

	spans := h.spans.Ended()
	require.ElementsMatch(t, []string{"lock.TryLock", "lock.TryLock", "lock.Refresh", "lock.Unlock", "lock.Lock", "lock.Unlock", "caller"},
		names(spans))
	tokens := map[string]string{}
	for _, s := range spans {
		if s.Name() == "caller" {
			continue
		}
		a := spanAttrs(s)
		assert.Equal(t, caller.SpanContext().SpanID(), s.Parent().SpanID(), s.Name())
		assert.Equal(t, "lock", a["slotlimit.package"])
		assert.Equal(t, "jobs:nightly", a["slotlimit.key"])
		assert.Equal(t, s.Name(), "lock."+a["slotlimit.operation"].(string))
		if s.Name() == "lock.Lock" {
			assert.GreaterOrEqual(t, a["slotlimit.wait.duration"], 0.15)
			assert.Contains(t, a, "slotlimit.handover.latency")
			tokens["waiter"] = a["slotlimit.holder"].(string)
		}
	}
	assert.Equal(t, waiter.Token(), tokens["waiter"], "the holder is the owner token")

	got := h.collect(t)
	assert.Equal(t, map[string]int64{
		set("package", "lock", "operation", "TryLock", "outcome", "acquired"):              1,
		set("package", "lock", "operation", "TryLock", "outcome", "refused"):               1,
		set("package", "lock", "operation", "Refresh", "outcome", "renewed", "held", true): 1,
		set("package", "lock", "operation", "Lock", "outcome", "acquired"):                 1,
		set("package", "lock", "operation", "Unlock", "outcome", "released", "held", true): 2,
	}, got.sums(t, "slotlimit.calls", "{call}"))
	assert.Equal(t, map[string]int64{set("package", "lock", "operation", "TryLock"): 1},
		got.sums(t, "slotlimit.refusals", "{call}"))
	assert.Equal(t, map[string]uint64{set("package", "lock", "operation", "Lock"): 1}, got.counts(t, "slotlimit.wait.duration"))
	assert.Equal(t, map[string]uint64{set("package", "lock", "operation", "Lock"): 1}, got.counts(t, "slotlimit.handover.latency"))
	assert.Equal(t, map[string]int64{set("package", "lock"): 1}, got.gauges(t, "slotlimit.units.in_use", "{unit}"))
}

// A lease kept alive that is found lost counts in slotlimit.leases.lost;
// a LeaseLost with a span in its ctx adds an event to that span.
func TestLeaseLostIsCounted(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	client, _ := newRedis(t)
	l, err := slotlimit.New(client, slotlimit.Config{Key: "ar:0571", Limit: 2, TTL: 3 * time.Second, Observer: h.obs})
	require.NoError(t, err)
	lease, err := l.AcquireLease(ctx, 1)
	require.NoError(t, err)
	work := lease.KeepAlive(ctx)
	require.NoError(t, client.Del(ctx, "ar:0571").Err()) // the lease is gone
	select {
	case <-work.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the lease was not found lost")
	}
	require.ErrorIs(t, context.Cause(work), slotlimit.ErrNotHeld)
	m := h.collect(t)
	assert.Equal(t, map[string]int64{set("package", "slotlimit"): 1}, m.sums(t, "slotlimit.leases.lost", "{lease}"))

	ctx, span := h.callerSpan(ctx)
	h.obs.Observe(ctx, observe.Event{Kind: observe.LeaseLost, Package: "lock", Key: "jobs:nightly",
		Holder: "t0k3n", InUse: -1, Start: time.Now(), Err: lock.ErrNotHeld})
	span.End()
	var lost []sdktrace.Event
	for _, s := range h.spans.Ended() {
		if s.Name() == "caller" {
			lost = s.Events()
		}
	}
	require.Len(t, lost, 1)
	assert.Equal(t, "slotlimit.lease_lost", lost[0].Name)
	assert.ElementsMatch(t, []attribute.KeyValue{
		attribute.String("slotlimit.package", "lock"), attribute.String("slotlimit.key", "jobs:nightly"),
		attribute.String("slotlimit.holder", "t0k3n"), attribute.String("error.message", lock.ErrNotHeld.Error()),
	}, lost[0].Attributes)
	assert.Equal(t, map[string]int64{set("package", "slotlimit"): 1, set("package", "lock"): 1},
		h.collect(t).sums(t, "slotlimit.leases.lost", "{lease}"))
}

// Without options, the Observer records through the global providers.
func TestGlobalProvidersByDefault(t *testing.T) {
	prevMP, prevTP := otel.GetMeterProvider(), otel.GetTracerProvider()
	t.Cleanup(func() {
		otel.SetMeterProvider(prevMP)
		otel.SetTracerProvider(prevTP)
	})
	reader := sdkmetric.NewManualReader()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	spans := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))

	obs, err := slotlimitotel.NewObserver()
	require.NoError(t, err)
	client, _ := newRedis(t)
	l, err := slotlimit.New(client, slotlimit.Config{Key: "ar:0571", Limit: 1, Observer: obs})
	require.NoError(t, err)
	_, err = l.TryAcquire(context.Background(), "a")
	require.NoError(t, err)

	h := &harness{reader: reader}
	assert.Equal(t, map[string]int64{set("package", "slotlimit", "operation", "TryAcquire", "outcome", "acquired"): 1},
		h.collect(t).sums(t, "slotlimit.calls", "{call}"))
	assert.Equal(t, []string{"slotlimit.TryAcquire"}, names(spans.Ended()))
}

// An Observer with a provider that cannot make its instruments is not
// made.
func TestNewObserverReportsInstrumentErrors(t *testing.T) {
	_, err := slotlimitotel.NewObserver(slotlimitotel.WithMeterProvider(failingProvider{}))
	require.Error(t, err)
	assert.True(t, errors.Is(err, errNoInstruments), "%v", err)
}

var errNoInstruments = errors.New("no instruments here")

// failingProvider makes meters whose counters cannot be made.
type failingProvider struct{ noop.MeterProvider }

func (failingProvider) Meter(string, ...metric.MeterOption) metric.Meter { return failingMeter{} }

type failingMeter struct{ noop.Meter }

func (failingMeter) Int64Counter(string, ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return noop.Int64Counter{}, errNoInstruments
}
