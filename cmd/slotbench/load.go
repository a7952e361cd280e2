package main

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// grace is how long a phase's calls may run past its duration before their
// context ends: long enough for a waiter to be handed a slot after the load
// stops, short enough to bound the run.
const grace = 5 * time.Second

// drive calls op on workers goroutines, each passing its worker number,
// until d has passed or maxOps calls have begun in all. It returns the
// number of calls that succeeded and the first error; a call that fails
// stops the phase. The calls' context ends grace after d, and an error
// once it has ended counts as the phase's end, not as a failure.
func drive(ctx context.Context, workers int, d time.Duration, maxOps int64, op func(ctx context.Context, w int) error) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, d+grace)
	defer cancel()
	var (
		begun, done atomic.Int64
		stop        atomic.Bool
		once        sync.Once
		first       error
		wg          sync.WaitGroup
	)
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	defer timer.Stop()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() && begun.Add(1) <= maxOps {
				if err := op(ctx, w); err != nil {
					if ctx.Err() == nil {
						once.Do(func() { first = err })
					}
					stop.Store(true)
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	return done.Load(), first
}

// timings holds latency samples, one slice per worker, so that recording
// takes no lock.
type timings [][]time.Duration

func newTimings(workers int) timings {
	return make(timings, workers)
}

func (t timings) add(w int, d time.Duration) {
	t[w] = append(t[w], d)
}

// quantiles returns the samples at each quantile q (0 < q < 1), or zeros
// when there are none.
func (t timings) quantiles(qs ...float64) []time.Duration {
	all := slices.Concat(t...)
	slices.Sort(all)
	out := make([]time.Duration, len(qs))
	if len(all) == 0 {
		return out
	}
	for i, q := range qs {
		out[i] = all[min(int(q*float64(len(all))), len(all)-1)]
	}
	return out
}
