package slotlimit

import (
	"context"
	"log/slog"

	"github.com/slotlimit/slotlimit/internal/observe"
)

// An Observer is told of what a Limiter or a lock.Mutex does, one Event at
// a time, on the goroutine of the call that made it: set one on
// Config.Observer. It must be quick and safe for concurrent use, and must
// not call back into the primitive that reports to it. The module
// github.com/slotlimit/slotlimit/otel, a module of its own, turns events
// into OpenTelemetry metrics and spans; SlogObserver logs them.
type Observer = observe.Observer

// An Event is one thing a Limiter or a lock.Mutex reports. Every call
// that reaches Redis reports exactly one final event, last (see
// EventKind.Final); Acquire and Lock may report Waited and HandedOver
// before it; a Lease or a lock.Lock kept alive reports LeaseLost when it
// is lost.
type Event = observe.Event

// An EventKind is what an Event reports.
type EventKind = observe.Kind

// The kinds of Event.
const (
	EventAcquired   = observe.Acquired   // a call took units; InUse after it
	EventRefused    = observe.Refused    // a try found no room; InUse now
	EventWaited     = observe.Waited     // a call waited; Duration from its first refusal
	EventHandedOver = observe.HandedOver // a waiter was handed units; Duration from the release
	EventReleased   = observe.Released   // a release; Held: the lease was live
	EventRenewed    = observe.Renewed    // a renewal; Held: the lease was live
	EventLeaseLost  = observe.LeaseLost  // a lease kept in process was lost
	EventError      = observe.Error      // a call failed; Err
)

// SlogObserver returns an Observer that logs each event to logger: lost
// leases and failed calls at Warn, the rest at Debug, with the package,
// operation, key, holder, units, units in use, and duration. A nil
// logger means slog.Default().
func SlogObserver(logger *slog.Logger) Observer {
	if logger == nil {
		logger = slog.Default()
	}
	return slogObserver{logger}
}

type slogObserver struct{ logger *slog.Logger }

func (o slogObserver) Observe(ctx context.Context, e Event) {
	level := slog.LevelDebug
	if e.Kind == EventLeaseLost || e.Kind == EventError {
		level = slog.LevelWarn
	}
	if !o.logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("package", e.Package),
		slog.String("key", e.Key),
		slog.String("holder", e.Holder),
	}
	if e.Op != "" {
		attrs = append(attrs, slog.String("op", e.Op))
	}
	if e.Units > 0 {
		attrs = append(attrs, slog.Int64("units", e.Units))
	}
	if e.InUse >= 0 {
		attrs = append(attrs, slog.Int64("in_use", e.InUse), slog.Int64("limit", e.Limit))
	}
	if e.Kind == EventReleased || e.Kind == EventRenewed {
		attrs = append(attrs, slog.Bool("held", e.Held))
	}
	if e.Kind != EventLeaseLost {
		attrs = append(attrs, slog.Duration("duration", e.Duration))
	}
	if e.Err != nil {
		attrs = append(attrs, slog.Any("error", e.Err))
	}
	o.logger.LogAttrs(ctx, level, e.Package+": "+e.Kind.String(), attrs...)
}

// begin starts observing a call of l's.
func (l *Limiter) begin(op, holder string, units int64) observe.Call {
	return observe.Begin(l.cfg.Observer, "slotlimit", op, l.cfg.Key, holder, units, l.cfg.Limit)
}

// observeResult reports the end of an acquire that returned res and err.
func observeResult(ctx context.Context, c *observe.Call, res Result, err error) {
	switch {
	case !c.On():
	case err != nil:
		c.Failed(ctx, err)
	case res.Acquired:
		c.Acquired(ctx, res.Count)
	default:
		c.Refused(ctx, res.Count)
	}
}
