// Package slotlimit lets many processes that share one Redis let at most
// N holders at once into a guarded section, such as calls to an external
// system that accepts only so many callers.
//
// A [Limiter] is the type to use. Each holder, such as a device ID, takes
// a slot under a lease that lapses on the Redis server's clock, so a holder
// that crashes costs its own slot until its lease lapses, and never the
// whole limit. Every check-and-take is one Lua script, so the limit holds
// under any interleaving of callers.
//
// Two patterns cover most uses. An event-driven caller, such as a handler
// of device reports, takes a slot when it can and never waits:
//
//	res, err := limiter.TryAcquire(ctx, deviceID) // on a report
//	if err == nil && res.Acquired {
//		handOutTask(deviceID)
//	}
//	limiter.Release(ctx, deviceID) // on the result report; safe to repeat
//
// A worker waits for a slot and keeps it alive while it works:
//
//	lease, err := limiter.AcquireLease(ctx, 1)
//	defer lease.Release(context.WithoutCancel(ctx)) // safe on a nil lease
//	if err != nil {
//		return err
//	}
//	ctx = lease.KeepAlive(ctx) // cancelled if the lease is lost
//
// Waiting costs no polling: a release hands its units to the first waiter
// queued in Redis and tells its process over pub/sub. A lease can weigh
// several units ([Limiter.TryAcquireN]); [Config.Fair] makes waiters take
// units strictly in arrival order across processes.
//
// A [Counter] keeps the same plain integer as older INCR/DECR scripts, so
// that services still running them can share a key with it; it has no
// per-holder leases, and docs/design.md says what that costs.
//
// Deadlines and errors are as a Go Redis library's should be: every call
// honours its context, bad input returns [ErrInvalidConfig],
// [ErrInvalidHolder] or [ErrInvalidWeight] and touches nothing, and a
// Redis that is down returns the client's error; every error names the
// package, the method and the key.
package slotlimit
