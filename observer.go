package slotlimit

import (
	"context"

	"github.com/slotlimit/slotlimit/internal/observe"
)

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
