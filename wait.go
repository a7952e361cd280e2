package slotlimit

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"
)

const (
	// maxPoll caps the sleep between tries when no notice can arrive:
	// for a Counter, and for a waiter whose subscription is not ready.
	maxPoll = 100 * time.Millisecond
	// minPoll keeps a waiter from spinning when a lease is due at once.
	minPoll = time.Millisecond
	// cleanupTimeout bounds the release that follows a failed acquire.
	cleanupTimeout = time.Second
	// queueTTL is how long a waiter keeps its place in the queue without
	// trying again, so a waiter that dies leaves the queue then; it is also
	// the claim time of units a release hands to a waiter.
	queueTTL = 3 * time.Second
)

var queueTTLArg any = formatMillis(queueTTL)

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

// poll calls try until it acquires, fails, or ctx is done. Between tries it
// sleeps until the earliest lease is due to lapse, capped at maxPoll and
// jittered. It is how a Counter waits, since its scripts send no notices.
func poll(ctx context.Context, try func() (Result, error)) (Result, error) {
	timer := stoppedTimer()
	defer timer.Stop()
	for {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		res, err := try()
		if err != nil || res.Acquired {
			return res, err
		}
		d := pollDelay(res.EarliestLapse)
		timer.Reset(d)
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-timer.C:
		}
	}
}

// acquireOutcome settles what a waiting acquire returns: a failed acquire
// reports no slot, and its error matches ctx.Err() whenever ctx is done,
// unless Redis itself answered with an error, which is kept.
func acquireOutcome(ctx context.Context, cfg Config, res Result, err error) (Result, error) {
	if err == nil {
		return res, nil
	}
	if ctxErr := ctxDone(ctx); ctxErr != nil && outcomeUnknown(err) {
		err = opError("acquire", cfg.Key, ctxErr)
	}
	return Result{Limit: cfg.Limit}, err
}

// stoppedTimer returns a timer for a wait loop to Reset before each sleep.
func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// pollDelay is a random time in [d/2, d], with d the retry hint clamped to
// [minPoll, maxPoll]; no hint (a key with no expiry) means maxPoll.
func pollDelay(hint time.Duration) time.Duration {
	if hint <= 0 {
		hint = maxPoll
	}
	d := min(max(hint, minPoll), maxPoll)
	return d/2 + rand.N(d/2+1)
}

func formatMillis(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10)
}
