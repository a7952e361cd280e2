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
// found it or moved it.

// adaptiveLimitName is the name of the gauge of an adaptive limit.
const adaptiveLimitName = "slotlimit.adaptive.limit"

// attrLimitBefore is the limit before a move, on a move's span event.
const attrLimitBefore = attribute.Key("slotlimit.limit.before")

// newAdaptiveLimit makes the gauge of an adaptive limit.
func newAdaptiveLimit(meter metric.Meter) (metric.Int64Gauge, error) {
	return meter.Int64Gauge(adaptiveLimitName, metric.WithUnit("{slot}"),
		metric.WithDescription("The shared limit of an adaptive limit (package adaptive), as the last call found it or moved it."))
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
	o.adaptiveLimit.Record(ctx, e.Limit, o.setsOf(ctx, e).state.rec...)
}
