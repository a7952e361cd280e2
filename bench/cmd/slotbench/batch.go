package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// A burst is the batch comparison at one number of callers: each caller
// takes 100 slots on a key of its own and gives them back, by 100 calls
// of each kind or by one TryAcquireBatch and one ReleaseBatch.
type burst struct {
	callers             int
	single, batch       harness.Phase
	singleLat, batchLat harness.Timings // per burst
}

// runBursts runs the batch comparison with callers callers.
func (b *bench) runBursts(ctx context.Context, callers int) (burst, error) {
	r := burst{callers: callers, singleLat: harness.NewTimings(callers), batchLat: harness.NewTimings(callers)}
	holders := ids(holderForm, batchSize)
	limiters := make([]*slotlimit.Limiter, callers)
	for w := range limiters {
		limiters[w] = b.limiter(fmt.Sprintf("batch:%d:%d", callers, w), batchSize, leaseTTL)
	}
	single := func(ctx context.Context, w int) error {
		t0 := time.Now()
		l := limiters[w]
		for _, h := range holders {
			res, err := l.TryAcquire(ctx, h)
			if err == nil && !res.Acquired {
				err = errors.New("refused")
			}
			if err != nil {
				return err
			}
		}
		for _, h := range holders {
			if err := notHeldIsNil(l.Release(ctx, h)); err != nil {
				return err
			}
		}
		r.singleLat.Add(w, time.Since(t0))
		return nil
	}
	batch := func(ctx context.Context, w int) error {
		t0 := time.Now()
		l := limiters[w]
		results, err := l.TryAcquireBatch(ctx, holders)
		if err != nil {
			return err
		}
		for _, res := range results {
			if !res.Acquired {
				return errors.New("refused in a batch")
			}
		}
		if _, err := l.ReleaseBatch(ctx, holders); err != nil {
			return err
		}
		r.batchLat.Add(w, time.Since(t0))
		return nil
	}
	var err error
	r.single, err = b.Measure(ctx, func() (int64, error) { return harness.Drive(ctx, b.Bounds(callers), single) })
	if err != nil {
		return r, fmt.Errorf("100 single calls: %w", err)
	}
	r.batch, err = b.Measure(ctx, func() (int64, error) { return harness.Drive(ctx, b.Bounds(callers), batch) })
	if err != nil {
		return r, fmt.Errorf("batch of 100: %w", err)
	}
	return r, nil
}
