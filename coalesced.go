package slotlimit

import (
	"context"

	"github.com/slotlimit/slotlimit/internal/coalesce"
)

// lanes are the calls a Limiter coalesces (see Config.DisableCoalescing):
// its tries, one lane per weight for those that do not wait and one per
// weight for those that join the queue when refused, its releases and
// its renewals. Each batch is one call of the script a single call runs.
type lanes struct {
	tries    coalesce.Group[tryKey, string, attempt]
	releases coalesce.Group[struct{}, releaseReq, bool]
	renewals coalesce.Group[struct{}, string, int64]
}

// batchMax is the most calls in one batch, so that no batch holds the
// server for much more than a millisecond: its costliest batches, 63
// releases each handing its unit to a waiter and 63 waiting acquires
// joining a fair queue of 200, each took a real Redis 1.0 to 1.4 ms on a
// shared 2-core machine.
const batchMax = 64

// newLanes returns l's lanes, which send each call alone when cfg turns
// coalescing off.
func newLanes(l *Limiter, cfg Config) *lanes {
	alone := cfg.DisableCoalescing
	return &lanes{
		tries:    coalesce.Group[tryKey, string, attempt]{Send: l.sendTries, Max: batchMax, Alone: alone},
		releases: coalesce.Group[struct{}, releaseReq, bool]{Send: l.sendReleases, Max: batchMax, Alone: alone},
		renewals: coalesce.Group[struct{}, string, int64]{Send: l.sendRenewals, Max: batchMax, Alone: alone},
	}
}

// tryOnce runs one try of holder for k's units, in a batch or alone, for
// a call of method.
func (l *Limiter) tryOnce(ctx context.Context, method, holder string, k tryKey) (attempt, error) {
	a, err := l.lanes.tries.Do(ctx, k, holder)
	if err != nil {
		l.unsettled.Note(holder, err)
		return attempt{res: Result{Limit: l.cfg.Limit}}, errs.Call(ctx, method, l.cfg.Key, err)
	}
	return a, nil
}

// runRelease releases holder, whose lease the server gave deadline (ms;
// 0 when unknown), in a batch or alone: it reports whether holder held a
// live lease. A try of holder's whose ctx ended while its batch was in
// flight goes first: the release waits for that batch.
func (l *Limiter) runRelease(ctx context.Context, holder string, deadline int64) (bool, error) {
	l.unsettled.Settle(ctx, holder)
	released, err := l.lanes.releases.Do(ctx, struct{}{}, releaseReq{holder: holder, deadline: deadline})
	if err != nil {
		return false, errs.Call(ctx, "Release", l.cfg.Key, err)
	}
	return released, nil
}

// runRenew renews holder's lease, in a batch or alone: it returns the
// lease's new deadline on the server's clock (ms), and false when holder
// held no live lease. Like runRelease, it waits for a try of holder's
// left in flight.
func (l *Limiter) runRenew(ctx context.Context, holder string) (int64, bool, error) {
	l.unsettled.Settle(ctx, holder)
	deadline, err := l.lanes.renewals.Do(ctx, struct{}{}, holder)
	if err != nil {
		return 0, false, errs.Call(ctx, "Renew", l.cfg.Key, err)
	}
	return deadline, deadline > 0, nil
}
