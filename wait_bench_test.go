package slotlimit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// BenchmarkWaiters runs 200 workers on a real Redis against limit 60, each
// holding its slot for 2ms, in turn with the two ways to wait: notify is
// Acquire, which sleeps until a release hands it units or a lease is due
// to lapse; poll, the baseline, calls TryAcquire again at once after each
// refusal. Run it with
//
//	go test -run '^$' -bench BenchmarkWaiters -benchtime 20000x
//
// An iteration is one successful acquire. It reports held/limit, the mean
// share of the limit held as Redis counts it, sampled every millisecond;
// working/limit, the mean share of the limit spent inside the guarded
// section (the 2ms holds themselves); cmds/acquire, the Redis commands the
// clients sent per successful acquire, the release included and the
// sampler's excluded; and refusals/s, the poller's refused tries.
func BenchmarkWaiters(b *testing.B) {
	const (
		workers = 200
		limit   = 60
		hold    = 2 * time.Millisecond
	)
	addr := redistest.Addr(b)
	for _, mode := range []string{"notify", "poll"} {
		b.Run(mode, func(b *testing.B) {
			client := redis.NewClient(&redis.Options{Addr: addr, PoolSize: workers + 10})
			defer client.Close()
			var commands atomic.Int64
			client.AddHook(hook(func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
				commands.Add(1)
				return next(ctx, cmd)
			}))
			key := fmt.Sprintf("slotlimit-bench:waiters:%d", rand.Int64())
			l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: limit, TTL: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()

			var (
				left     atomic.Int64 // acquires still to do
				refusals atomic.Int64
				busy     atomic.Int64 // ns inside the guarded section, summed over all holders
				wg       sync.WaitGroup
			)
			left.Store(int64(b.N))
			// A sampler reads the slots held, as Redis counts them, every millisecond.
			var held, samples atomic.Int64
			sampling, stopSampling := context.WithCancel(ctx)
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				tick := time.NewTicker(time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-sampling.Done():
						return
					case <-tick.C:
					}
					if n, err := l.Count(sampling); err == nil {
						held.Add(n)
						samples.Add(1)
					}
				}
			}()
			b.ResetTimer()
			start := time.Now()
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(holder string) {
					defer wg.Done()
					for left.Add(-1) >= 0 {
						for {
							var res slotlimit.Result
							if mode == "notify" {
								res, err = l.Acquire(ctx, holder)
							} else {
								res, err = l.TryAcquire(ctx, holder)
							}
							if err != nil {
								b.Error(err)
								return
							}
							if res.Acquired {
								break
							}
							refusals.Add(1)
						}
						got := time.Now()
						time.Sleep(hold)
						busy.Add(int64(time.Since(got)))
						if err := l.Release(ctx, holder); err != nil {
							b.Error(err)
							return
						}
					}
				}(fmt.Sprintf("worker-%d", w))
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			stopSampling()
			<-sampled
			b.ReportMetric(float64(held.Load())/float64(max(samples.Load(), 1))/limit, "held/limit")
			b.ReportMetric(float64(busy.Load())/float64(elapsed)/limit, "working/limit")
			b.ReportMetric(float64(commands.Load()-samples.Load())/float64(b.N), "cmds/acquire")
			b.ReportMetric(float64(refusals.Load())/elapsed.Seconds(), "refusals/s")
			client.Del(context.Background(), key)
		})
	}
}
