package slotlimit

import (
	"context"
	"math/rand/v2"
	"time"
)

const (
	// maxPoll caps the sleep between tries when no notice can arrive:
	// for a Counter, and for a waiter whose subscription is not ready.
	maxPoll = 100 * time.Millisecond
	// minPoll keeps a waiter from spinning when a lease is due at once.
	minPoll = time.Millisecond
)

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

// pollDelay is a random time in [d/2, d], with d the retry hint clamped to
// [minPoll, maxPoll]; no hint (a key with no expiry) means maxPoll.
func pollDelay(hint time.Duration) time.Duration {
	if hint <= 0 {
		hint = maxPoll
	}
	d := min(max(hint, minPoll), maxPoll)
	return d/2 + rand.N(d/2+1)
}

// stoppedTimer returns a timer for a wait loop to Reset before each sleep.
func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}
