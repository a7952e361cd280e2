package harness

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Grace is how long a phase's calls may run past its duration before their
// context ends: long enough for a waiter to be handed what it waits for
// after the load stops, short enough to bound the run.
const Grace = 5 * time.Second

// Bounds are the limits of one stretch of load: Workers goroutines, for
// at most Duration and at most MaxOps operations in all, whichever comes
// first.
type Bounds struct {
	Workers  int
	Duration time.Duration
	MaxOps   int64
}

// Bounds returns the options' bounds for load on workers goroutines.
func (o Options) Bounds(workers int) Bounds {
	return Bounds{Workers: workers, Duration: o.Duration, MaxOps: o.MaxOps}
}

// Drive calls op on b.Workers goroutines, each passing its worker number,
// until b.Duration has passed or b.MaxOps calls have begun in all. It
// returns the number of calls that succeeded and the first error; a call
// that fails stops the load. The calls' context ends Grace after
// b.Duration, and an error once it has ended counts as the load's end,
// not as a failure.
func Drive(ctx context.Context, b Bounds, op func(ctx context.Context, w int) error) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, b.Duration+Grace)
	defer cancel()
	var (
		begun, done atomic.Int64
		stop        atomic.Bool
		once        sync.Once
		first       error
		wg          sync.WaitGroup
	)
	timer := time.AfterFunc(b.Duration, func() { stop.Store(true) })
	defer timer.Stop()
	for w := range b.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() && begun.Add(1) <= b.MaxOps {
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
