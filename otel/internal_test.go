package slotlimitotel

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/slotlimit/slotlimit/observe"
)

func newNoopObserver(t testing.TB, opts ...Option) *Observer {
	t.Helper()
	o, err := NewObserver(append([]Option{WithMeterProvider(metricnoop.NewMeterProvider()),
		WithTracerProvider(tracenoop.NewTracerProvider())}, opts...)...)
	require.NoError(t, err)
	return o
}

// A call whose final event never comes is kept at most until maxPending
// calls are, and then only for pendingTTL.
func TestPendingIsBounded(t *testing.T) {
	ctx := context.Background()
	o := newNoopObserver(t)
	base := time.Now()
	waited := func(i int) observe.Event {
		return observe.Event{Kind: observe.Waited, Package: "slotlimit", Op: "Acquire", Key: "k", Holder: "h",
			Start: base.Add(time.Duration(i)), Duration: time.Millisecond, InUse: -1}
	}
	for i := range maxPending + 10 {
		o.Observe(ctx, waited(i))
	}
	assert.Equal(t, maxPending, o.pending.len(), "full: the newest are dropped")

	final := waited(0)
	final.Kind = observe.Error
	o.Observe(ctx, final)
	assert.Equal(t, maxPending-1, o.pending.len(), "the final event takes its call's")
	o.Observe(ctx, final)
	assert.Equal(t, maxPending-1, o.pending.len(), "and only its call's")

	o.Observe(ctx, waited(maxPending+20)) // full again
	require.Equal(t, maxPending, o.pending.len())
	o.pending.mu.Lock()
	for id, w := range o.pending.m {
		if id.start != base.Add(1).UnixNano() {
			w.noted = w.noted.Add(-pendingTTL - time.Second)
			o.pending.m[id] = w
		}
	}
	o.pending.mu.Unlock()
	o.Observe(ctx, waited(maxPending+30))
	assert.Equal(t, 2, o.pending.len(), "the stale are dropped to make room; the recent one stays")
}

// The attribute sets kept are bounded; past the bound they are built for
// each call, and still right.
func TestSetsAreBounded(t *testing.T) {
	ctx := context.Background()
	o := newNoopObserver(t, WithKeyAttribute())
	for i := range maxSets + 10 {
		o.Observe(ctx, observe.Event{Kind: observe.Acquired, Package: "slotlimit", Op: "TryAcquire",
			Key: "k" + strconv.Itoa(i), Holder: "h", InUse: 1, Limit: 2})
	}
	assert.Len(t, *o.sets.m.Load(), maxSets)
	s := o.setsOf(ctx, observe.Event{Kind: observe.Released, Package: "lock", Op: "Unlock", Key: "x", Held: true})
	assert.Equal(t, "lock.Unlock", s.spanName)
	assert.Len(t, *o.sets.m.Load(), maxSets)
}

// Recording a call whose attribute sets are kept allocates nothing, into
// the SDK's meter, but what the tracer's Start does.
func TestObserveAllocatesOnlyForTheSpan(t *testing.T) {
	ctx := context.Background()
	tp := tracenoop.NewTracerProvider()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	t.Cleanup(func() { mp.Shutdown(ctx) }) //nolint:errcheck // in-memory
	o, err := NewObserver(WithMeterProvider(mp), WithTracerProvider(tp))
	require.NoError(t, err)
	start := time.Now()
	tracer := tp.Tracer(ScopeName)
	span := testing.AllocsPerRun(100, func() { startSpan(ctx, tracer, "slotlimit.TryAcquire", start) })
	for _, kind := range []observe.Kind{observe.Acquired, observe.Refused, observe.Released} {
		e := observe.Event{Kind: kind, Package: "slotlimit", Op: "TryAcquire", Key: "k", Holder: "h",
			Units: 1, InUse: 1, Limit: 2, Start: start, Duration: time.Millisecond}
		o.Observe(ctx, e)
		assert.Equal(t, span, testing.AllocsPerRun(100, func() { o.Observe(ctx, e) }), "%v: the span's %v", kind, span)
	}
	wait := observe.Event{Kind: observe.Waited, Package: "slotlimit", Op: "Acquire", InUse: -1, Start: start, Duration: time.Millisecond}
	o.Observe(ctx, wait)
	assert.Zero(t, testing.AllocsPerRun(100, func() { o.Observe(ctx, wait) }), "a wait records and notes")
}

// startSpan starts and ends a span as Observer.span does.
//
//go:noinline
func startSpan(ctx context.Context, tracer trace.Tracer, name string, at time.Time) {
	_, span := tracer.Start(ctx, name, trace.WithTimestamp(at))
	span.End()
}
