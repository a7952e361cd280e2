package slotlimit

import (
	"context"
	"time"

	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// poll calls try until it acquires, fails, or ctx is done. Between tries it
// sleeps until the earliest lease is due to lapse, capped at waitqueue.MaxPoll and
// jittered. It is how a Counter waits, since its scripts send no notices.
func poll(ctx context.Context, try func() (Result, error)) (Result, error) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		res, err := try()
		if err != nil || res.Acquired {
			return res, err
		}
		d := waitqueue.PollDelay(res.EarliestLapse)
		timer.Reset(d)
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-timer.C:
		}
	}
}
