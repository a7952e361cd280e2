// Package observe carries what the primitives report as they run to the
// Observer a caller sets on a primitive's Config: calls that took or were
// refused units, waits, hand-overs, releases, leases lost and Redis
// errors. With no Observer set, a call costs one nil check and allocates
// nothing more.
package observe

import (
	"context"
	"time"
)

// An Observer is told of each Event as it happens, on the goroutine of the
// call that made it, so it must be quick and safe for concurrent use. It
// must not call back into the primitive that reports to it.
type Observer interface {
	Observe(ctx context.Context, e Event)
}

// A Kind is what an Event reports.
type Kind uint8

const (
	// Acquired: a call took units, or a lock. InUse is the units in use
	// after it, Units the call's.
	Acquired Kind = iota + 1
	// Refused: a try found no room and took nothing. InUse is the units
	// in use.
	Refused
	// Waited: a call waited in the queue before it took units or gave up;
	// Duration is the wait, from its first refused try. An Acquired or an
	// Error follows.
	Waited
	// HandedOver: a waiter was handed units by a release, and returns
	// with them; Duration runs from the release, on the server's clock,
	// to the return, on the local clock, so it includes their skew. An
	// Acquired follows.
	HandedOver
	// Released: a call freed a lease. Held says whether it was live.
	Released
	// Renewed: a call extended a lease. Held says whether it was live.
	Renewed
	// LeaseLost: a lease held in process was found gone, or could not be
	// renewed before it must have lapsed. Err says why, when known.
	LeaseLost
	// Error: a call failed; Err is its error.
	Error
)

var kindNames = [...]string{
	Acquired: "acquired", Refused: "refused", Waited: "waited", HandedOver: "handed_over",
	Released: "released", Renewed: "renewed", LeaseLost: "lease_lost", Error: "error",
}

// String returns the kind's name in snake case, such as "handed_over".
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// Final reports whether k ends a call: every call reports exactly one of
// Acquired, Refused, Released, Renewed and Error, last.
func (k Kind) Final() bool {
	switch k {
	case Acquired, Refused, Released, Renewed, Error:
		return true
	}
	return false
}

// An Event is one thing a primitive reports.
type Event struct {
	Kind    Kind
	Package string // the reporting package: "slotlimit" or "lock"
	Op      string // the call, as named in the API: "TryAcquire", "Acquire", "Release", "Lock", "Unlock", ...
	Key     string // the primitive's Config.Key
	Holder  string // the holder ID, or a lock's owner token

	Units int64 // units the call asked for or took; 1 for a lock
	InUse int64 // Acquired and Refused: units in use after the call, as the reply said; else -1
	Limit int64 // the limit the call ran under; 1 for a lock
	Held  bool  // Released and Renewed: whether the lease was live

	// Start is when the call began, on the local clock.
	Start time.Time
	// Duration is, for a final kind, the call's, and for Waited and
	// HandedOver as they say.
	Duration time.Duration
	// Err is the error of an Error, and the cause of a LeaseLost.
	Err error
}

// A Call is one call being observed. The zero Call, which Begin returns
// when there is no Observer, reports nothing and costs nothing.
type Call struct {
	obs Observer
	e   Event
}

// Begin starts observing a call; obs may be nil.
func Begin(obs Observer, pkg, op, key, holder string, units, limit int64) Call {
	if obs == nil {
		return Call{}
	}
	return Call{obs: obs, e: Event{Package: pkg, Op: op, Key: key, Holder: holder,
		Units: units, Limit: limit, InUse: -1, Start: time.Now()}}
}

// On reports whether the call is observed, for work done only to report.
func (c *Call) On() bool { return c.obs != nil }

// Acquired reports that the call took units, inUse in use after it.
func (c *Call) Acquired(ctx context.Context, inUse int64) {
	c.final(ctx, Acquired, inUse, false, nil)
}

// Refused reports that the call took nothing, inUse in use.
func (c *Call) Refused(ctx context.Context, inUse int64) {
	c.final(ctx, Refused, inUse, false, nil)
}

// Released reports the end of a release; held says whether it freed a
// live lease.
func (c *Call) Released(ctx context.Context, held bool) {
	c.final(ctx, Released, -1, held, nil)
}

// Renewed reports the end of a renewal; held says whether the lease was
// live.
func (c *Call) Renewed(ctx context.Context, held bool) {
	c.final(ctx, Renewed, -1, held, nil)
}

// Failed reports that the call failed with err.
func (c *Call) Failed(ctx context.Context, err error) {
	c.final(ctx, Error, -1, false, err)
}

// Waited reports that the call waited in the queue since its first
// refused try at since.
func (c *Call) Waited(ctx context.Context, since time.Time) {
	c.interim(ctx, Waited, since)
}

// HandedOver reports that the call was handed units released at
// released, on the server's clock.
func (c *Call) HandedOver(ctx context.Context, released time.Time) {
	c.interim(ctx, HandedOver, released)
}

// interim reports an event of kind, before the call's final one, that
// lasted from since until now.
func (c *Call) interim(ctx context.Context, k Kind, since time.Time) {
	if c.obs == nil {
		return
	}
	e := c.e
	e.Kind, e.Duration = k, time.Since(since)
	c.obs.Observe(ctx, e)
}

func (c *Call) final(ctx context.Context, k Kind, inUse int64, held bool, err error) {
	if c.obs == nil {
		return
	}
	e := c.e
	e.Kind, e.InUse, e.Held, e.Err, e.Duration = k, inUse, held, err, time.Since(e.Start)
	c.obs.Observe(ctx, e)
}

// Lost reports to obs, if not nil, that the lease of holder on key was
// lost, for cause, found by a call with ctx.
func Lost(ctx context.Context, obs Observer, pkg, key, holder string, cause error) {
	if obs == nil {
		return
	}
	obs.Observe(ctx, Event{Kind: LeaseLost, Package: pkg, Key: key, Holder: holder,
		InUse: -1, Start: time.Now(), Err: cause})
}
