package slotlimitotel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/slotlimit/slotlimit/observe"
)

// The shared limit of package adaptive, which moves as calls report how
// they went, is exported as a gauge: the limit as the last call on the key
// found it or moved it; and, for a limit that reads latency, its latency
// estimate, as two gauges beside it.

// adaptiveLimitName is the name of the gauge of an adaptive limit.
const adaptiveLimitName = "slotlimit.adaptive.limit"

// attrLimitBefore is the limit before a move, on a move's span event.
const attrLimitBefore = attribute.Key("slotlimit.limit.before")

// The names of the gauges of an adaptive limit's latency estimate, kept
// when its Limiters set RTTTolerance.
const (
	adaptiveLatencyName = "slotlimit.adaptive.latency"
	adaptiveNoLoadName  = "slotlimit.adaptive.latency.no_load"
)

// newAdaptiveLimit makes the gauge of an adaptive limit.
func newAdaptiveLimit(meter metric.Meter) (metric.Int64Gauge, error) {
	return meter.Int64Gauge(adaptiveLimitName, metric.WithUnit("{slot}"),
		metric.WithDescription("The shared limit of an adaptive limit (package adaptive), as the last call found it or moved it."))
}

// newAdaptiveLatency makes the gauges of an adaptive limit's latency
// estimate: the recent latency and the no-load latency.
func newAdaptiveLatency(meter metric.Meter) (recent, noLoad metric.Float64Gauge, err error) {
	recent, err = meter.Float64Gauge(adaptiveLatencyName, metric.WithUnit("s"),
		metric.WithDescription("The recent latency of an adaptive limit that reads latency (package adaptive, RTTTolerance set): the mean, from grant to Success, of the last window's successes, as the last release found it."))
	if err != nil {
		return nil, nil, err
	}
	noLoad, err = meter.Float64Gauge(adaptiveNoLoadName, metric.WithUnit("s"),
		metric.WithDescription("The no-load latency of an adaptive limit that reads latency (package adaptive, RTTTolerance set), as the last release found it."))
	return recent, noLoad, err
}

// observeAdaptive records the limit that an event of package adaptive
// reports: each move of the limit (LimitChanged), and the limit each
// acquire, refusal and release ran under, so that the gauge has a value
// before the limit first moves. A move also adds an event to the caller's
// span, if it records, with the limit before and after.
func (o *Observer) observeAdaptive(ctx context.Context, e observe.Event) {
	if e.Package != "adaptive" || e.Limit <= 0 {
		return
	}
	switch e.Kind {
	case observe.LimitChanged:
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			span.AddEvent("slotlimit.limit_changed", trace.WithAttributes(
				attrKey.String(e.Key), attrLimitBefore.Int64(e.Units), attrLimit.Int64(e.Limit)))
		}
	case observe.Acquired, observe.Refused, observe.Released:
	default:
		return
	}
	rec := o.setsOf(ctx, e).state.rec
	o.adaptiveLimit.Record(ctx, e.Limit, rec...)
	if e.Latency > 0 {
		o.adaptiveLatency.Record(ctx, e.Latency.Seconds(), rec...)
	}
	if e.NoLoadLatency > 0 {
		o.adaptiveNoLoad.Record(ctx, e.NoLoadLatency.Seconds(), rec...)
	}
}
