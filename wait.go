package slotlimit

import (
	"context"
	"math/rand/v2"
	"time"
)

// wait runs the acquire script until it succeeds, fails or ctx ends. A
// refused try joins the queue; between tries it sleeps until a release
// hands it the units, until the earliest lease is due to lapse, or until
// its place in the queue needs refreshing. Units handed over last only the
// claim time, so wait claims them, renewing the lease to its full time,
// before it returns: a lease it returns never lapses sooner than TTL. When
// it fails, holder holds nothing: a try whose outcome is unknown is undone,
// and a waiter that gives up leaves the queue and frees units it may have
// been handed meanwhile.
func (l *Limiter) wait(ctx context.Context, holder string, n int64) (Result, error) {
	h, w := l.join(holder)
	defer h.leave(w)
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
		h.queued(w, arrival, sent)
		d := queueTTL / 3
		if res.EarliestLapse > 0 && res.EarliestLapse < d {
			// Come back just after the lapse, spread over a little time.
			d = res.EarliestLapse + minPoll + rand.N(min(res.EarliestLapse/8, 25*time.Millisecond)+1)
		}
		if !h.ready(w) {
			d = min(d, pollDelay(maxPoll))
		}
		timer.Reset(d)
		select {
		case <-ctx.Done():
			l.releaseDetached(ctx, holder)
			return res, ctx.Err()
		case <-w.wake:
			if handed, ok := h.handedLease(w); ok {
				deadline, live, err := l.renew(ctx, holder)
				if err != nil {
					l.releaseDetached(ctx, holder)
					return res, err
				}
				if live {
					handed.Limit, handed.Weight, handed.ExpiresAt = l.cfg.Limit, n, deadline
					return handed, nil
				}
				// Gone already (its claim time ran out): try again.
			}
		case <-timer.C:
		}
	}
}
