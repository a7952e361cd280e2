package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// A manyKeys result is scenario 3: one TryAcquire+Release on each of -keys
// area codes.
type manyKeys struct {
	keys  int64 // asked for
	left  int64 // keys of the area codes still in Redis afterwards
	lease harness.PairResult
}

// manyKeys runs scenario 3, in at most 15 times -duration.
func (b *bench) manyKeys(ctx context.Context) (manyKeys, error) {
	r := harness.NewPairResult(nameLimiter, []string{"evalsha"}, b.Workers)
	holders := ids(holderForm, b.Workers)
	var next atomic.Int64
	bounds := harness.Bounds{Workers: b.Workers, Duration: 15 * b.Duration, MaxOps: int64(b.keys)}
	ph, err := b.Measure(ctx, func() (int64, error) {
		return harness.Drive(ctx, bounds, func(ctx context.Context, w int) error {
			l := b.limiter(fmt.Sprintf("ar:%06d", next.Add(1)-1), areaLimit, leaseTTL)
			t0 := time.Now()
			res, err := l.TryAcquire(ctx, holders[w])
			if err == nil && !res.Acquired {
				err = errors.New("refused on an empty key")
			}
			if err != nil {
				return err
			}
			t1 := time.Now()
			if err := notHeldIsNil(l.Release(ctx, holders[w])); err != nil {
				return err
			}
			r.Acquire.Add(w, t1.Sub(t0))
			r.Release.Add(w, time.Since(t1))
			return nil
		})
	})
	if err != nil {
		return manyKeys{}, fmt.Errorf("many keys: %w", err)
	}
	r.Phase = ph
	left, err := harness.CountKeys(ctx, b.Admin, "*"+b.Key("ar:*"))
	if err != nil {
		return manyKeys{}, err
	}
	return manyKeys{keys: int64(b.keys), left: left, lease: r}, nil
}
