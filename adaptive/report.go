package adaptive

import (
	"context"
	"time"

	"github.com/slotlimit/slotlimit/observe"
)

// The kinds of event a call reports before its final one.
const (
	kindWaited     = observe.Waited
	kindHandedOver = observe.HandedOver
)

// A call is one call being reported to Config.Observer. The zero call,
// which begin returns when there is no Observer, reports nothing and
// costs nothing.
type call struct {
	obs observe.Observer
	e   observe.Event
}

// begin starts reporting a call of op for holder.
func (l *Limiter) begin(op, holder string) call {
	if l.cfg.Observer == nil {
		return call{}
	}
	return call{obs: l.cfg.Observer, e: observe.Event{Package: "adaptive", Op: op, Key: l.cfg.Key,
		Holder: holder, Units: 1, InUse: -1, Start: time.Now()}}
}

// on reports whether the call is reported, for work done only to report.
func (c *call) on() bool { return c.obs != nil }

// acquired reports that the call took a slot, inUse in use after it under
// limit.
func (c *call) acquired(ctx context.Context, inUse, limit int64) {
	c.final(ctx, observe.Acquired, inUse, limit, false, nil)
}

// refused reports that the call took nothing, inUse in use under limit.
func (c *call) refused(ctx context.Context, inUse, limit int64) {
	c.final(ctx, observe.Refused, inUse, limit, false, nil)
}

// released reports the end of a release under limit; held says whether
// it freed a live slot.
func (c *call) released(ctx context.Context, held bool, limit int64) {
	c.final(ctx, observe.Released, -1, limit, held, nil)
}

// failed reports that the call failed with err.
func (c *call) failed(ctx context.Context, err error) {
	c.final(ctx, observe.Error, -1, 0, false, err)
}

// limitChanged reports that the call moved the limit from before to
// after, inUse in use after it.
func (c *call) limitChanged(ctx context.Context, before, after, inUse int64) {
	if c.obs == nil {
		return
	}
	e := c.e
	e.Kind, e.Units, e.Limit, e.InUse, e.Duration = observe.LimitChanged, before, after, inUse, time.Since(e.Start)
	c.obs.Observe(ctx, e)
}

// interim reports an event of kind, before the call's final one, that
// lasted from since until now.
func (c *call) interim(ctx context.Context, kind observe.Kind, since time.Time) {
	if c.obs == nil {
		return
	}
	e := c.e
	e.Kind, e.Duration = kind, time.Since(since)
	c.obs.Observe(ctx, e)
}

func (c *call) final(ctx context.Context, kind observe.Kind, inUse, limit int64, held bool, err error) {
	if c.obs == nil {
		return
	}
	e := c.e
	e.Kind, e.InUse, e.Limit, e.Held, e.Err, e.Duration = kind, inUse, limit, held, err, time.Since(e.Start)
	c.obs.Observe(ctx, e)
}
