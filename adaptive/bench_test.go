package adaptive_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// benchLimiter returns a Limiter on a real Redis, for a key of the
// benchmark's own.
func benchLimiter(b *testing.B) *adaptive.Limiter {
	l, _ := benchLimiterOn(b, false)
	return l
}

// benchLimiterOn returns a Limiter on a real Redis, for a key of the
// benchmark's own, with coalescing disabled or not, and its client.
func benchLimiterOn(b *testing.B, disableCoalescing bool) (*adaptive.Limiter, *redis.Client) {
	client := redis.NewClient(&redis.Options{Addr: redistest.Addr(b)})
	b.Cleanup(func() { client.Close() })
	l, err := adaptive.New(client, adaptive.Config{Key: fmt.Sprintf("adaptive-bench:%s:%d", b.Name(), time.Now().UnixNano()),
		Max: 100, Initial: 50, TTL: time.Minute, DisableCoalescing: disableCoalescing})
	if err != nil {
		b.Fatal(err)
	}
	return l, client
}

// A TryAcquire and a Success by one caller alone: the commonest pair,
// with its median time (p50-µs/pair) and the server's time
// (redis-µs/pair), with coalescing (which sends a lone call at once) and
// without.
func BenchmarkTryAcquireSuccess(b *testing.B) {
	for _, disable := range []bool{false, true} {
		name := "coalescing"
		if disable {
			name = "alone"
		}
		b.Run(name, func(b *testing.B) {
			l, client := benchLimiterOn(b, disable)
			ctx := context.Background()
			if s, err := l.TryAcquire(ctx); err != nil || s.Success(ctx) != nil {
				b.Fatal("the first pair failed:", err)
			}
			before, err := evalshaStats(ctx, client)
			if err != nil {
				b.Fatal(err)
			}
			took := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				s, err := l.TryAcquire(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Success(ctx); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			b.StopTimer()
			after, err := evalshaStats(ctx, client)
			if err != nil {
				b.Fatal(err)
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1e3, "p50-µs/pair")
			b.ReportMetric(float64(after.usec-before.usec)/float64(b.N), "redis-µs/pair")
		})
	}
}

// An Acquire of a free slot, which takes it at its first try, and a
// Dropped.
func BenchmarkAcquireDropped(b *testing.B) {
	l := benchLimiter(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s, err := l.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Dropped(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// An Inspect of a limit with one slot held.
func BenchmarkInspect(b *testing.B) {
	l := benchLimiter(b)
	ctx := context.Background()
	s, err := l.TryAcquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Inspect(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	s.Ignore(ctx) //nolint:errcheck
}

// crowd is how many callers BenchmarkCrowd runs on one key.
const crowd = 64

// BenchmarkCrowd runs crowd callers on one key of a real Redis, each
// taking a slot with TryAcquire and freeing it with Success, without
// pause, through one Limiter: with coalescing, the default, and with
// Config.DisableCoalescing. It reports pairs/s, and the server's time per
// pair (redis-µs/pair: the usec of EVALSHA in INFO commandstats, which
// includes the commands the scripts run) and its script calls per pair.
// Compare the two rows of one run:
//
//	SLOTLIMIT_REQUIRE_REDIS=1 go test -run '^$' -bench BenchmarkCrowd -benchtime 20000x -count 3 ./adaptive/
func BenchmarkCrowd(b *testing.B) {
	for _, disable := range []bool{false, true} {
		name := "coalescing"
		if disable {
			name = "alone"
		}
		b.Run(name, func(b *testing.B) {
			client := redis.NewClient(&redis.Options{Addr: redistest.Addr(b), PoolSize: crowd})
			b.Cleanup(func() { client.Close() })
			ctx := context.Background()
			l, err := adaptive.New(client, adaptive.Config{Key: fmt.Sprintf("adaptive-bench:%s:%d", b.Name(), time.Now().UnixNano()),
				Max: 2 * crowd, Initial: crowd, TTL: time.Minute, DisableCoalescing: disable})
			if err != nil {
				b.Fatal(err)
			}
			// One pair first, so that the scripts are cached and the key is set.
			if s, err := l.TryAcquire(ctx); err != nil || s.Success(ctx) != nil {
				b.Fatal("the first pair failed:", err)
			}
			before, err := evalshaStats(ctx, client)
			if err != nil {
				b.Fatal(err)
			}
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for range crowd {
				wg.Go(func() {
					for left.Add(-1) >= 0 {
						s, err := l.TryAcquire(ctx)
						if err != nil {
							b.Error(err)
							return
						}
						if err := s.Success(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			after, err := evalshaStats(ctx, client)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pairs/s")
			b.ReportMetric(float64(after.usec-before.usec)/float64(b.N), "redis-µs/pair")
			b.ReportMetric(float64(after.calls-before.calls)/float64(b.N), "calls/pair")
		})
	}
}

// scriptStats are the calls and usec of EVALSHA and EVAL in INFO
// commandstats.
type scriptStats struct{ calls, usec int64 }

// evalshaStats reads the server's scriptStats.
func evalshaStats(ctx context.Context, client *redis.Client) (scriptStats, error) {
	var st scriptStats
	info, err := client.Info(ctx, "commandstats").Result()
	if err != nil {
		return st, err
	}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:")
		if !ok {
			rest, ok = strings.CutPrefix(line, "cmdstat_eval:")
		}
		if !ok {
			continue
		}
		for _, field := range strings.Split(rest, ",") {
			name, value, _ := strings.Cut(field, "=")
			n, _ := strconv.ParseInt(value, 10, 64)
			switch name {
			case "calls":
				st.calls += n
			case "usec":
				st.usec += n
			}
		}
	}
	return st, nil
}
