// Package slotlimitotel turns what every slotlimit primitive reports to
// its Observer into OpenTelemetry metrics and spans: a slotlimit.Limiter
// or slotlimit.Counter, an adaptive.Limiter, a lock.Mutex, a
// ratelimit.Limiter (and so httplimit's middleware), a delayqueue.Queue,
// a recent.List and a redpacket.Store. Each package's Config.Observer
// takes the one type observe.Observer, which an *Observer is, and one
// Observer serves any number of primitives of any package:
//
//	obs, err := slotlimitotel.NewObserver() // the global providers
//	if err != nil {
//		return err
//	}
//	limiter, err := slotlimit.New(rdb, slotlimit.Config{Key: "ar:0571", Limit: 60, Observer: obs})
//	mutex, err := lock.New(rdb, lock.Config{Key: "jobs:nightly", Observer: obs})
//	queue, err := delayqueue.New(rdb, delayqueue.Config{Key: "jobs:emails", Observer: obs})
//
// It is a module of its own, github.com/slotlimit/slotlimit/otel, so that
// the library's module does not depend on OpenTelemetry. The package is
// named slotlimitotel rather than otel so that it reads apart from
// go.opentelemetry.io/otel, which code that wires it usually imports too.
//
// # Metrics
//
// Every call that reaches Redis counts once in slotlimit.calls and
// slotlimit.call.duration, by package ("slotlimit", "adaptive", "lock",
// "ratelimit", "delayqueue", "recent" or "redpacket"), operation
// ("TryAcquire", "Unlock", "Allow", "Push", ...) and outcome ("acquired", "refused",
// "released", "renewed", "done", "canceled" or "error"; a release or
// renewal also says whether the lease was live, in slotlimit.held).
// Refusals, errors (by error.type), waits, hand-overs, lost leases and the
// units in use have instruments of their own, and an adaptive.Limiter's
// shared limit is the gauge slotlimit.adaptive.limit; the module's README
// lists them all.
//
// A call that ends because the ctx it was given was cancelled or reached
// its deadline (an Acquire or a Lock that gives up waiting, the calls cut
// short when a process shuts down) is the caller's choice, not a failure:
// it counts under outcome "canceled", not in slotlimit.errors, and its
// span has no error status. A context error while that ctx is still live
// came from elsewhere, and counts as an error.
//
// The Redis key of a primitive is left off the metrics unless
// WithKeyAttribute is given: a service that builds one Limiter per
// tenant, area or user would otherwise make one time series per key, for
// every instrument and attribute combination. Give it when the keys are
// few and fixed.
//
// # Spans
//
// Each call becomes one span, named for the package and the operation
// ("slotlimit.TryAcquire", "lock.Unlock", "delayqueue.Push"), not for
// the Redis commands it sends; it starts when the call began and ends when it returned, and its
// parent is the span in the ctx the call was given. Spans carry the key
// and the holder (a lock's owner token) always, since spans are not
// aggregated, and the units, the units in use and the limit. A failed
// call's span has status Error and the error recorded as an event (a
// call cut short by its ctx has neither). An
// Acquire or Lock that waited carries the wait, and the hand-over's
// latency when a release handed it the units, as attributes.
//
// The span is made when the call has returned, from its final event, so
// spans that a Redis client's own instrumentation makes during the call
// are its siblings, not its children.
//
// # Cost
//
// The attribute sets for each package, operation and outcome are built
// once and reused, so recording a call's metrics allocates nothing beyond
// what the OpenTelemetry SDK does; a span costs what the tracer's Start
// costs. With WithKeyAttribute the sets are cached for the first 1024
// combinations of key, operation and outcome, and built afresh for each
// call past that.
package slotlimitotel
