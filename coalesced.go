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

// newLanes returns l's lanes, or nil when cfg turns coalescing off.
func newLanes(l *Limiter, cfg Config) *lanes {
	if cfg.DisableCoalescing {
		return nil
	}
	return &lanes{
		tries:    coalesce.Group[tryKey, string, attempt]{Send: l.sendTries, Max: batchMax},
		releases: coalesce.Group[struct{}, releaseReq, bool]{Send: l.sendReleases, Max: batchMax},
		renewals: coalesce.Group[struct{}, string, int64]{Send: l.sendRenewals, Max: batchMax},
	}
}

// tryOnce runs one try of holder for k's units, in a batch or alone, for
// a call of method.
func (l *Limiter) tryOnce(ctx context.Context, method, holder string, k tryKey) (attempt, error) {
	var a attempt
	var err error
	if l.lanes != nil {
		a, err = l.lanes.tries.Do(ctx, k, holder)
		l.unsettled.Note(holder, err)
	} else {
		var out []attempt
		if out, err = l.sendTries(ctx, k, []string{holder}); err == nil {
			a = out[0]
		}
	}
	if err != nil {
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
	req := releaseReq{holder: holder, deadline: deadline}
	var released bool
	var err error
	if l.lanes != nil {
		released, err = l.lanes.releases.Do(ctx, struct{}{}, req)
	} else {
		var out []bool
		if out, err = l.sendReleases(ctx, struct{}{}, []releaseReq{req}); err == nil {
			released = out[0]
		}
	}
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
	var deadline int64
	var err error
	if l.lanes != nil {
		deadline, err = l.lanes.renewals.Do(ctx, struct{}{}, holder)
	} else {
		var out []int64
		if out, err = l.sendRenewals(ctx, struct{}{}, []string{holder}); err == nil {
			deadline = out[0]
		}
	}
	if err != nil {
		return 0, false, errs.Call(ctx, "Renew", l.cfg.Key, err)
	}
	return deadline, deadline > 0, nil
}
