package slotlimit

import (
	"context"
	"time"

	"github.com/slotlimit/slotlimit/internal/observe"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// wait is one waiter's life (see waitqueue.Run): it runs the acquire
// script until it succeeds, fails or ctx ends. A refused try joins the
// queue; between tries it sleeps until a release hands it the units, until
// the earliest lease is due to lapse, or until its place in the queue needs
// refreshing. When it fails, holder holds nothing: a try whose outcome is
// unknown is undone, and a waiter that gives up leaves the queue and frees
// units it may have been handed meanwhile, handing them on.
//
// Units handed over by a release are held for the waiter only until the
// claim time, or its lease time if shorter, runs out, by the server's
// clock; the waiter claims them for the deadline the notice states, its
// full lease time from the release. wait returns that lease the moment
// the notice arrives, with no round trip on its path, if they must still
// be held for it with time for the claim to arrive, and sends the claim
// behind it (see claimHanded). x, the Lease being acquired if any, learns
// the deadline the server gave it: its grant's, or its hand-off's until
// the claim lands and then the claim's; a failed claim marks it lost. A
// waiter that reads the notice later (its process was stopped or starved)
// tries again instead. With Config.Replicas set, it claims first, so that
// the replicas acknowledge the lease before it is returned; then, and
// whenever a try's reply came late, it returns only if the units must
// still be held for it (see waitqueue.Run).
//
// c, the call of method, is told whether it waited and was handed units
// (see waitqueue.Observed).
func (l *Limiter) wait(ctx context.Context, method, holder string, n int64, x *Lease, c *observe.Call) (Result, error) {
	var res Result
	err := waitqueue.Observed(ctx, c, l.notices, l.channel, holder, waitqueue.Steps{
		Try: func(ctx context.Context) (waitqueue.Try, error) {
			var try waitqueue.Try
			var err error
			res, try, err = l.try(ctx, method, holder, n)
			if err == nil && res.Acquired {
				try.Lease = l.cfg.TTL
				if x != nil {
					x.heldUntil(res.ExpiresAt)
				}
			}
			return try, err
		},
		Take: func(h waitqueue.Handed) (bool, error) {
			if l.cfg.Replicas == 0 {
				return true, nil // held for the waiter until h.HeldUntil; Accept claims it
			}
			return l.claim(ctx, method, holder, h.Deadline)
		},
		Accept: func(h waitqueue.Handed) {
			if l.cfg.Replicas == 0 {
				if x != nil {
					// Live while the server's clock is before HeldUntil + 1 ms.
					x.heldUntil(h.HeldUntil.Add(time.Millisecond))
				}
				go l.claimHanded(ctx, holder, h.Deadline, x)
			} else if x != nil {
				x.heldUntil(h.Deadline) // Take claimed it
			}
			res = Result{Acquired: true, Count: h.Value, Limit: l.cfg.Limit, ExpiresAt: h.Deadline, Weight: n}
		},
		Leave: func(ctx context.Context) { l.leave(ctx, holder) },
	})
	return res, err
}

// claimHanded claims a lease handed to holder for deadline, detached from
// ctx and bounded by cleanupTimeout, and tells x, if not nil, the deadline
// the server now gives it, or marks x lost when it holds no lease. A claim
// that fails leaves the lease to lapse when its claim time runs out.
func (l *Limiter) claimHanded(ctx context.Context, holder string, deadline time.Time, x *Lease) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	live, err := l.claim(ctx, "Acquire", holder, deadline)
	switch {
	case x == nil:
	case err == nil && live:
		x.heldUntil(deadline)
	default:
		x.lose()
		x.keep.Lose() // the handed lease lapses with its claim time
	}
}

// claim runs claim.lua for a call of method: holder takes the lease a release handed it until
// deadline. It reports false when holder holds no live lease.
func (l *Limiter) claim(ctx context.Context, method, holder string, deadline time.Time) (bool, error) {
	_, held, err := l.runClaim(ctx, method, holder, deadline)
	return held, err
}
