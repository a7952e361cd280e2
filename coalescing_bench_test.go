package slotlimit_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// BenchmarkCrowdOnOneKey measures TryAcquire+Release pairs of distinct
// holders on one key, from 1 and 64 goroutines, with coalescing on and
// off, beside raw INCR+DECR pairs, on a real Redis: pairs/s and the
// server's µs per pair (INFO commandstats).
//
//	go test -run '^$' -bench BenchmarkCrowdOnOneKey
func BenchmarkCrowdOnOneKey(b *testing.B) {
	client := redis.NewClient(&redis.Options{Addr: redistest.Addr(b)})
	defer client.Close()
	ctx := context.Background()
	var keys atomic.Int64
	for _, callers := range []int{1, 64, 256} {
		for _, variant := range []string{"coalesced", "single", "raw"} {
			b.Run(fmt.Sprintf("callers=%d/%s", callers, variant), func(b *testing.B) {
				key := fmt.Sprintf("crowd-bench:%d", keys.Add(1))
				l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: 1 << 20, TTL: time.Minute, DisableCoalescing: variant == "single"})
				if err != nil {
					b.Fatal(err)
				}
				pair := func(holder string) error {
					if variant == "raw" {
						if err := client.Incr(ctx, key).Err(); err != nil {
							return err
						}
						return client.Decr(ctx, key).Err()
					}
					if _, err := l.TryAcquire(ctx, holder); err != nil {
						return err
					}
					return l.Release(ctx, holder)
				}
				if err := pair("warm"); err != nil {
					b.Fatal(err)
				}
				client.ConfigResetStat(ctx)
				var workers atomic.Int64
				b.SetParallelism(max(callers/runtime.GOMAXPROCS(0), 1))
				start := time.Now()
				b.ResetTimer()
				if callers == 1 {
					for range b.N {
						if err := pair("h"); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.RunParallel(func(pb *testing.PB) {
						holder := fmt.Sprint("h", workers.Add(1))
						for pb.Next() {
							if err := pair(holder); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.StopTimer()
				elapsed := time.Since(start)
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pairs/s")
				b.ReportMetric(serverMicros(b, client)/float64(b.N), "redis-µs/pair")
			})
		}
	}
}

// serverMicros returns the server's µs in top-level commands since the
// last CONFIG RESETSTAT, INFO itself aside.
func serverMicros(b *testing.B, client *redis.Client) float64 {
	info, err := client.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(info, "\n") {
		if !strings.HasPrefix(line, "cmdstat_") || strings.HasPrefix(line, "cmdstat_info:") || strings.HasPrefix(line, "cmdstat_config") {
			continue
		}
		for _, field := range strings.Split(strings.TrimSpace(line[strings.Index(line, ":")+1:]), ",") {
			if v, ok := strings.CutPrefix(field, "usec="); ok {
				us, _ := strconv.ParseFloat(v, 64)
				total += us
			}
		}
	}
	return total
}
