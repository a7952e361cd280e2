package slotlimit

import (
	"context"
	"math/rand/v2"
	"time"
)

// wait runs the acquire script until it succeeds, fails or ctx ends. A
// refused try joins the queue; between tries it sleeps until a release
// hands it the units, until the earliest lease is due to lapse, or until
// its place in the queue needs refreshing. When it fails, holder holds
// nothing: a try whose outcome is unknown is undone, and a waiter that
// gives up leaves the queue and frees units it may have been handed
// meanwhile.
//
// Units handed over by a release last only the claim time until the
// waiter claims them for the deadline the notice states, its full lease
// time from the release. wait returns that lease the moment the notice
// arrives, with no round trip on its path, and sends the claim behind it
// (see claimHanded); claimed, if not nil, learns how the claim went. With
// Config.Replicas set, it claims first, so that the replicas acknowledge
// the lease before it is returned.
func (l *Limiter) wait(ctx context.Context, holder string, n int64, claimed func(ok bool)) (Result, error) {
	h := l.join(holder)
	defer h.Leave()
	timer := stoppedTimer()
	defer timer.Stop()
	queued := false
	for {
		sent := time.Now()
		res, arrival, err := l.try(ctx, holder, n, true)
		if err != nil && (queued || outcomeUnknown(err)) {
			// Units may be held, or handed over from the queue.
			l.releaseDetached(ctx, holder)
		}
		if err != nil || res.Acquired {
			return res, err
		}
		queued = queued || arrival != 0
		h.queued(arrival, sent)
		d := queueTTL / 3
		if res.EarliestLapse > 0 && res.EarliestLapse < d {
			// Come back just after the lapse, spread over a little time.
			d = res.EarliestLapse + minPoll + rand.N(min(res.EarliestLapse/8, 25*time.Millisecond)+1)
		}
		if !h.Ready() {
			d = min(d, pollDelay(maxPoll))
		}
		timer.Reset(d)
		select {
		case <-ctx.Done():
			l.releaseDetached(ctx, holder)
			return res, ctx.Err()
		case <-h.Wake():
			handed, ok := h.handedLease()
			if !ok {
				break
			}
			handed.Limit, handed.Weight = l.cfg.Limit, n
			if l.cfg.Replicas == 0 {
				go l.claimHanded(ctx, holder, handed.ExpiresAt, claimed)
				return handed, nil
			}
			live, err := l.claim(ctx, holder, handed.ExpiresAt)
			if err != nil {
				l.releaseDetached(ctx, holder)
				return res, err
			}
			if live {
				return handed, nil
			}
			// Gone already (its claim time ran out): try again.
		case <-timer.C:
		}
	}
}

// claimHanded claims a lease handed to holder for deadline, detached from
// ctx and bounded by cleanupTimeout, and tells claimed, if not nil,
// whether it holds the lease now. A claim that fails leaves the lease to
// lapse when its claim time runs out.
func (l *Limiter) claimHanded(ctx context.Context, holder string, deadline time.Time, claimed func(ok bool)) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	live, err := l.claim(ctx, holder, deadline)
	if claimed != nil {
		claimed(err == nil && live)
	}
}

// claim runs claim.lua: holder takes the lease a release handed it until
// deadline. It reports false when holder holds no live lease.
func (l *Limiter) claim(ctx context.Context, holder string, deadline time.Time) (bool, error) {
	at, err := l.runner.Run(ctx, claimScript, l.keys[:keyFull], holder, deadline.UnixMilli()).Int64()
	if err != nil {
		return false, callError(ctx, "claim", l.cfg.Key, err)
	}
	return at != 0, nil
}
