package slotlimit

import (
	"context"
	"time"

	"github.com/slotlimit/slotlimit/internal/observe"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// wait runs the acquire script until it succeeds, fails or ctx ends (see
// waitqueue.Wait.Loop). A refused try joins the queue; between tries it
// sleeps until a release hands it the units, until the earliest lease is
// due to lapse, or until its place in the queue needs refreshing. When it
// fails, holder holds nothing: a try whose outcome is unknown is undone,
// and a waiter that gives up leaves the queue and frees units it may have
// been handed meanwhile.
//
// Units handed over by a release last only the claim time until the
// waiter claims them for the deadline the notice states, its full lease
// time from the release. wait returns that lease the moment the notice
// arrives, with no round trip on its path, and sends the claim behind it
// (see claimHanded); claimed, if not nil, learns how the claim went. With
// Config.Replicas set, it claims first, so that the replicas acknowledge
// the lease before it is returned.
//
// c, the observed call, learns whether it waited and was handed units.
func (l *Limiter) wait(ctx context.Context, holder string, n int64, claimed func(ok bool), c *observe.Call) (Result, error) {
	w := waitqueue.Join(l.notices, l.channel, holder)
	defer w.Leave()
	var res Result
	var refused, released time.Time // the first refusal and the hand-over's release, when observed
	mayHold, err := w.Loop(ctx, func(ctx context.Context) (waitqueue.Try, error) {
		var arrival int64
		var err error
		res, arrival, err = l.try(ctx, holder, n, true)
		if c.On() && err == nil && !res.Acquired && refused.IsZero() {
			refused = time.Now()
		}
		return waitqueue.Try{Done: res.Acquired, Arrival: arrival, Lapse: res.EarliestLapse}, err
	}, func(h waitqueue.Handed) (bool, error) {
		if c.On() {
			released = h.Deadline.Add(-l.cfg.TTL) // the deadline is a lease time from the release
		}
		handed := Result{Acquired: true, Count: h.Value, Limit: l.cfg.Limit, ExpiresAt: h.Deadline, Weight: n}
		if l.cfg.Replicas == 0 {
			go l.claimHanded(ctx, holder, h.Deadline, claimed)
			res = handed
			return true, nil
		}
		live, err := l.claim(ctx, holder, h.Deadline)
		if live {
			res = handed
		}
		return live, err
	})
	if !refused.IsZero() {
		c.Waited(ctx, refused)
	}
	if err == nil && !released.IsZero() && res.ExpiresAt.Equal(released.Add(l.cfg.TTL)) {
		c.HandedOver(ctx, released)
	}
	if err != nil && (mayHold || outcomeUnknown(err)) {
		// Units may be held, or handed over from the queue.
		l.releaseDetached(ctx, holder)
	}
	return res, err
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
