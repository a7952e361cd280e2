package slotlimit

import (
	"context"

	"github.com/slotlimit/slotlimit/internal/observe"
)

// begin starts observing a call of l's.
func (l *Limiter) begin(op, holder string, units int64) observe.Call {
	return observe.Begin(l.cfg.Observer, "slotlimit", op, l.cfg.Key, holder, units, l.cfg.Limit)
}

// begin starts observing a call of c's.
func (c *Counter) begin(op string, units int64) observe.Call {
	return observe.Begin(c.cfg.Observer, "slotlimit", op, c.cfg.Key, "", units, c.cfg.Limit)
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
