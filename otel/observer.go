package slotlimitotel

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/lock"

	"github.com/slotlimit/slotlimit/observe"
)

// ScopeName is the instrumentation scope of the meter and the tracer.
const ScopeName = "github.com/slotlimit/slotlimit/otel"

// The attributes.
const (
	attrPackage   = attribute.Key("slotlimit.package")
	attrOperation = attribute.Key("slotlimit.operation")
	attrOutcome   = attribute.Key("slotlimit.outcome")
	attrHeld      = attribute.Key("slotlimit.held")
	attrKey       = attribute.Key("slotlimit.key")
	attrErrorType = attribute.Key("error.type")

	// On spans only.
	attrHolder   = attribute.Key("slotlimit.holder")
	attrUnits    = attribute.Key("slotlimit.units")
	attrInUse    = attribute.Key("slotlimit.in_use")
	attrLimit    = attribute.Key("slotlimit.limit")
	attrWait     = attribute.Key("slotlimit.wait.duration")
	attrHandover = attribute.Key("slotlimit.handover.latency")
)

// Advised histogram buckets, in seconds (and in a fraction of the limit
// for utilization). A View replaces them.
var (
	callBuckets        = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}
	waitBuckets        = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	handoverBuckets    = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}
	utilizationBuckets = []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1}
)

// An Observer records the events of every slotlimit primitive as
// OpenTelemetry metrics and spans: set it on the Config.Observer of a
// slotlimit.Limiter or Counter, an adaptive.Limiter, a lock.Mutex, a
// ratelimit.Limiter, a delayqueue.Queue, a recent.List or a
// redpacket.Store (it is an observe.Observer, the one type each of them
// takes). One Observer may serve any number of them. It is safe for
// concurrent use.
type Observer struct {
	tracer  trace.Tracer
	withKey bool

	calls       metric.Int64Counter
	callTime    metric.Float64Histogram
	refusals    metric.Int64Counter
	errors      metric.Int64Counter
	waits       metric.Float64Histogram
	handovers   metric.Float64Histogram
	lost        metric.Int64Counter
	inUse       metric.Int64Gauge
	utilization metric.Float64Histogram

	adaptiveLimit   metric.Int64Gauge   // see adaptive.go
	adaptiveLatency metric.Float64Gauge // see adaptive.go
	adaptiveNoLoad  metric.Float64Gauge

	sets    setCache
	pending pendingCalls
}

var _ observe.Observer = (*Observer)(nil)

type config struct {
	mp      metric.MeterProvider
	tp      trace.TracerProvider
	withKey bool
}

// An Option configures NewObserver.
type Option func(*config)

// WithMeterProvider makes the Observer record its metrics through mp; a
// nil mp, like no option, means the global one, otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithTracerProvider makes the Observer start its spans from tp; a nil
// tp, like no option, means the global one, otel.GetTracerProvider().
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithKeyAttribute adds the Redis key of the Limiter or lock, as
// slotlimit.key, to every metric. Each key then makes series of its own,
// so give it only when the keys are few and fixed; spans carry the key
// with or without it.
func WithKeyAttribute() Option {
	return func(c *config) { c.withKey = true }
}

// NewObserver returns an Observer that records through the global meter
// and tracer providers, or those the options give. It returns an error
// if an instrument cannot be made.
func NewObserver(opts ...Option) (*Observer, error) {
	var c config
	for _, opt := range opts {
		opt(&c)
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	meter := c.mp.Meter(ScopeName)
	o := &Observer{tracer: c.tp.Tracer(ScopeName), withKey: c.withKey}
	var err, e error
	add := func(e error) { err = errors.Join(err, e) }
	o.calls, e = meter.Int64Counter("slotlimit.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Calls that reached Redis, by outcome."))
	add(e)
	o.callTime, e = meter.Float64Histogram("slotlimit.call.duration", metric.WithUnit("s"),
		metric.WithDescription("How long calls took, waits included, by outcome."),
		metric.WithExplicitBucketBoundaries(callBuckets...))
	add(e)
	o.refusals, e = meter.Int64Counter("slotlimit.refusals", metric.WithUnit("{call}"),
		metric.WithDescription("Tries that found no room and took nothing."))
	add(e)
	o.errors, e = meter.Int64Counter("slotlimit.errors", metric.WithUnit("{error}"),
		metric.WithDescription("Calls that failed, by error.type."))
	add(e)
	o.waits, e = meter.Float64Histogram("slotlimit.wait.duration", metric.WithUnit("s"),
		metric.WithDescription("How long an Acquire or Lock waited in the queue, from its first refused try."),
		metric.WithExplicitBucketBoundaries(waitBuckets...))
	add(e)
	o.handovers, e = meter.Float64Histogram("slotlimit.handover.latency", metric.WithUnit("s"),
		metric.WithDescription("From a release that handed units to a waiter, on the server's clock, to the waiter's return."),
		metric.WithExplicitBucketBoundaries(handoverBuckets...))
	add(e)
	o.lost, e = meter.Int64Counter("slotlimit.leases.lost", metric.WithUnit("{lease}"),
		metric.WithDescription("Leases and locks kept alive in process that were found lost."))
	add(e)
	o.inUse, e = meter.Int64Gauge("slotlimit.units.in_use", metric.WithUnit("{unit}"),
		metric.WithDescription("Units in use, as the last acquire or refusal found them."))
	add(e)
	o.utilization, e = meter.Float64Histogram("slotlimit.units.utilization", metric.WithUnit("1"),
		metric.WithDescription("Units in use over the limit, as each acquire or refusal found them."),
		metric.WithExplicitBucketBoundaries(utilizationBuckets...))
	add(e)
	o.adaptiveLimit, e = newAdaptiveLimit(meter)
	add(e)
	o.adaptiveLatency, o.adaptiveNoLoad, e = newAdaptiveLatency(meter)
	add(e)
	if err != nil {
		return nil, err
	}
	return o, nil
}

// Observe records e: a primitive calls it as each event happens, on the
// goroutine of the call that made it.
func (o *Observer) Observe(ctx context.Context, e observe.Event) {
	o.observeAdaptive(ctx, e)
	switch {
	case e.Kind.Final():
		o.final(ctx, e)
	case e.Kind == observe.Waited:
		o.waits.Record(ctx, e.Duration.Seconds(), o.setsOf(ctx, e).op.rec...)
		o.pending.note(e)
	case e.Kind == observe.HandedOver:
		// Its Duration spans two clocks; skew can make it negative, which
		// a histogram cannot hold. The span keeps it as it is.
		o.handovers.Record(ctx, max(e.Duration.Seconds(), 0), o.setsOf(ctx, e).op.rec...)
		o.pending.note(e)
	case e.Kind == observe.LeaseLost:
		o.lost.Add(ctx, 1, o.setsOf(ctx, e).state.add...)
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			span.AddEvent("slotlimit.lease_lost", trace.WithAttributes(o.lostAttrs(e)...))
		}
	}
}

// final records the last event of a call.
func (o *Observer) final(ctx context.Context, e observe.Event) {
	s := o.setsOf(ctx, e)
	o.calls.Add(ctx, 1, s.call.add...)
	o.callTime.Record(ctx, e.Duration.Seconds(), s.call.rec...)
	switch {
	case e.Kind == observe.Refused:
		o.refusals.Add(ctx, 1, s.op.add...)
	case e.Kind == observe.Error && !s.canceled:
		o.errors.Add(ctx, 1, s.err.add...)
	}
	if e.InUse >= 0 {
		o.inUse.Record(ctx, e.InUse, s.state.rec...)
		if e.Limit > 0 {
			o.utilization.Record(ctx, float64(e.InUse)/float64(e.Limit), s.state.rec...)
		}
	}
	w, waited := o.pending.take(e)
	o.span(ctx, e, s, w, waited)
}

// span records the call that e ends as a span, with the wait and
// hand-over w that preceded it, if waited.
func (o *Observer) span(ctx context.Context, e observe.Event, s *sets, w waits, waited bool) {
	_, span := o.tracer.Start(ctx, s.spanName, trace.WithTimestamp(e.Start))
	if !span.IsRecording() {
		span.End()
		return
	}
	attrs := make([]attribute.KeyValue, 0, len(s.span)+8)
	attrs = append(attrs, s.span...)
	attrs = append(attrs, attrKey.String(e.Key), attrHolder.String(e.Holder))
	if e.Units > 0 {
		attrs = append(attrs, attrUnits.Int64(e.Units))
	}
	if e.InUse >= 0 {
		attrs = append(attrs, attrInUse.Int64(e.InUse))
	}
	if e.Limit > 0 {
		attrs = append(attrs, attrLimit.Int64(e.Limit))
	}
	if waited && w.hasWaited {
		attrs = append(attrs, attrWait.Float64(w.waited.Seconds()))
	}
	if waited && w.hasHanded {
		attrs = append(attrs, attrHandover.Float64(w.handed.Seconds()))
	}
	span.SetAttributes(attrs...)
	if e.Kind == observe.Error && e.Err != nil && !s.canceled {
		span.RecordError(e.Err)
		span.SetStatus(codes.Error, e.Err.Error())
	}
	span.End(trace.WithTimestamp(e.Start.Add(e.Duration)))
}

// lostAttrs are the attributes of a lost lease's span event.
func (o *Observer) lostAttrs(e observe.Event) []attribute.KeyValue {
	attrs := []attribute.KeyValue{attrPackage.String(e.Package), attrKey.String(e.Key), attrHolder.String(e.Holder)}
	if e.Err != nil {
		attrs = append(attrs, attribute.String("error.message", e.Err.Error()))
	}
	return attrs
}

// setsOf returns the attribute sets for e, reported with ctx.
func (o *Observer) setsOf(ctx context.Context, e observe.Event) *sets {
	k := setKey{pkg: e.Package, op: e.Op, kind: e.Kind}
	if o.withKey {
		k.key = e.Key
	}
	switch e.Kind {
	case observe.Released, observe.Renewed:
		k.held = e.Held
	case observe.Error:
		if cutShort(ctx, e.Err) {
			k.canceled = true
		} else {
			k.errType = errorType(e.Err)
		}
	}
	return o.sets.get(k, o.build)
}

// cutShort reports whether err ended a call because the caller's ctx,
// the one the call was given and reports with, was cancelled or reached
// its deadline: the caller gave up, and the system did not fail. A
// deadline that has passed counts even before ctx's timer has marked it
// done, since the connection's read can time out a moment before. A
// context error while ctx is live came from elsewhere, and is an error.
func cutShort(ctx context.Context, err error) bool {
	if ctx == nil || err == nil {
		return false
	}
	done := ctx.Err() != nil
	if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
		done = true
	}
	return done && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// errorType classifies err for error.type: a few values, so that the
// errors counter stays small.
func errorType(err error) string {
	var netErr net.Error
	var redisErr redis.Error
	switch {
	case err == nil:
		return "_OTHER"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	case errors.Is(err, slotlimit.ErrNotReplicated), errors.Is(err, lock.ErrNotReplicated),
		errors.Is(err, adaptive.ErrNotReplicated):
		return "not_replicated"
	case errors.As(err, &redisErr):
		return "redis"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.As(err, &netErr):
		return "network"
	}
	return "_OTHER"
}
