package slotlimit

import (
	"context"
	"math/rand/v2"
	"time"
)

const (
	// maxPoll caps the sleep between tries while waiting for a slot.
	maxPoll = 100 * time.Millisecond
	// minPoll keeps a waiter from spinning when a lease is due at once.
	minPoll = time.Millisecond
	// cleanupTimeout bounds the release that follows a failed acquire.
	cleanupTimeout = time.Second
)

// wait calls try until it acquires, fails, or ctx is done. Between tries it
// sleeps until the earliest lease is due to lapse, capped at maxPoll and
// jittered. It returns ctx.Err() when ctx ends while it sleeps; it never
// calls try with a done ctx.
func wait(ctx context.Context, try func() (Result, error)) (Result, error) {
	var timer *time.Timer
	for {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		res, err := try()
		if err != nil || res.Acquired {
			return res, err
		}
		d := pollDelay(res.RetryAfter)
		if timer == nil {
			timer = time.NewTimer(d)
			defer timer.Stop()
		} else {
			timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-timer.C:
		}
	}
}

// acquireOutcome settles what a waiting acquire returns: an error matches
// ctx.Err() whenever ctx is done, and a failed acquire reports no slot.
func acquireOutcome(ctx context.Context, cfg Config, res Result, err error) (Result, error) {
	if err == nil {
		return res, nil
	}
	if ctx.Err() != nil {
		err = opError("acquire", cfg.Key, ctx.Err())
	}
	return Result{Limit: cfg.Limit}, err
}

// pollDelay is a random time in [d/2, d], with d the retry hint clamped to
// [minPoll, maxPoll].
func pollDelay(hint time.Duration) time.Duration {
	d := min(max(hint, minPoll), maxPoll)
	return d/2 + rand.N(d/2+1)
}
