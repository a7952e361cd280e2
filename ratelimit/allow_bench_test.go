package ratelimit_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// benchLimits are the limits BenchmarkAllow measures, each of at most 10
// events at once and far slower than the calls, so that of each key's
// callsPerKey calls the first 10 are allowed and the rest refused,
// whatever the machine's speed: GCRA with a share of a period that is a
// whole number of µs, GCRA with one that is not, and FixedWindow beside
// them as the baseline.
var benchLimits = []struct {
	name  string
	limit ratelimit.Limit
}{
	{"gcra whole share", ratelimit.Limit{Rate: 10, Period: time.Hour}},                               // 360,000,000µs an event
	{"gcra share not whole", ratelimit.Limit{Rate: 7, Period: time.Hour, Burst: 10}},                 // 514,285,714 2/7µs an event
	{"fixed window", ratelimit.Limit{Rate: 10, Period: time.Hour, Algorithm: ratelimit.FixedWindow}}, // the baseline
}

// callsPerKey is how many calls each worker makes on a key before it
// moves to a key never used: 10 allowed, 2 refused.
const callsPerKey = 12

var benchRuns atomic.Int64

// BenchmarkAllow measures Allow on a real Redis, in parallel, with
// allocations and the server's time per call (redis-µs/op: EVALSHA's usec
// in INFO commandstats, which includes the commands the script runs, over
// its calls), for each of benchLimits. Compare the rows of one run:
//
//	go test -run '^$' -bench BenchmarkAllow -count 5 ./ratelimit/
func BenchmarkAllow(b *testing.B) {
	client := redis.NewClient(&redis.Options{Addr: redistest.Addr(b), PoolSize: 64})
	defer client.Close()
	limiter, err := ratelimit.New(client, ratelimit.Config{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, bl := range benchLimits {
		b.Run(bl.name, func(b *testing.B) {
			prefix := fmt.Sprintf("rl-bench:%d:", benchRuns.Add(1))
			var workers atomic.Int64
			if err := client.ConfigResetStat(ctx).Err(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				worker := prefix + strconv.FormatInt(workers.Add(1), 10) + ":"
				for i := 0; pb.Next(); i++ {
					key := worker + strconv.Itoa(i/callsPerKey)
					if _, err := limiter.Allow(ctx, key, bl.limit); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			calls, usec, err := commandStats(ctx, client, "evalsha")
			if err != nil {
				b.Fatal(err)
			}
			if calls > 0 {
				b.ReportMetric(float64(usec)/float64(calls), "redis-µs/op")
			}
		})
	}
}

// commandStats returns the calls and usec of the command name (in lower
// case) from INFO commandstats.
func commandStats(ctx context.Context, client *redis.Client, name string) (calls, usec int64, err error) {
	info, err := client.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+name+":")
		if !ok {
			continue
		}
		for _, field := range strings.Split(rest, ",") {
			name, value, _ := strings.Cut(field, "=")
			switch name {
			case "calls":
				calls, err = strconv.ParseInt(value, 10, 64)
			case "usec":
				usec, err = strconv.ParseInt(value, 10, 64)
			}
			if err != nil {
				return 0, 0, err
			}
		}
	}
	return calls, usec, nil
}
