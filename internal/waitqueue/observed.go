package waitqueue

import (
	"context"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/notice"
	"github.com/slotlimit/slotlimit/internal/observe"
)

// Observed runs a waiter's wait as Run does, for the call c reports. It
// reports to c, before the call's final event, Waited, from its first
// refused try, when a try was refused, and HandedOver, from the release,
// when it returns with a hand-off. An error that leaves the outcome
// unknown once ctx has ended is returned as ctx's error: the waiter has
// left the queue and holds nothing.
func Observed(ctx context.Context, c *observe.Call, site *notice.Site, channel, name string, steps Steps) error {
	steps.call = c
	err := Run(ctx, site, channel, name, steps)
	if err != nil && callerr.OutcomeUnknown(err) {
		if ctxErr := callerr.ContextDone(ctx); ctxErr != nil {
			return ctxErr
		}
	}
	return err
}
