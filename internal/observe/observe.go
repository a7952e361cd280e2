// Package observe carries what the primitives report as they run to the
// Observer a caller sets on a primitive's Config (see the public package
// of the same name): calls that took or were refused units, waits,
// hand-overs, releases, leases lost and Redis errors. With no Observer
// set, a call costs one nil check and allocates nothing more.
package observe

import (
	"context"
	"time"

	"github.com/slotlimit/slotlimit/observe"
)

// The public types, named here for the plumbing's brevity.
type (
	Observer = observe.Observer
	Event    = observe.Event
	Kind     = observe.Kind
)

// The kinds of Event.
const (
	Acquired     = observe.Acquired
	Refused      = observe.Refused
	Waited       = observe.Waited
	HandedOver   = observe.HandedOver
	Released     = observe.Released
	Renewed      = observe.Renewed
	LeaseLost    = observe.LeaseLost
	Error        = observe.Error
	Done         = observe.Done
	LimitChanged = observe.LimitChanged
)

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

// For returns a Call for one holder of a call made for many (a batch), of
// units, begun when c was: its events report as that holder's own call
// would.
func (c *Call) For(holder string, units int64) Call {
	d := *c
	d.e.Holder, d.e.Units = holder, units
	return d
}

// SetLimit sets the limit the call's later events report, for a call
// that learns the limit from its answer.
func (c *Call) SetLimit(limit int64) { c.e.Limit = limit }

// SetLatency sets the latency estimate the call's later events report,
// for a call of an adaptive limit that reads latency.
func (c *Call) SetLatency(recent, noLoad time.Duration) {
	c.e.Latency, c.e.NoLoadLatency = recent, noLoad
}

// LimitChanged reports that the call moved the limit from before to
// after, inUse in use after it: Units carries before, Limit after.
func (c *Call) LimitChanged(ctx context.Context, before, after, inUse int64) {
	if c.obs == nil {
		return
	}
	e := c.e
	e.Kind, e.Units, e.Limit, e.InUse, e.Duration = LimitChanged, before, after, inUse, time.Since(e.Start)
	c.obs.Observe(ctx, e)
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

// Done reports that a call that takes and frees no units took effect.
func (c *Call) Done(ctx context.Context) {
	c.final(ctx, Done, -1, false, nil)
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
