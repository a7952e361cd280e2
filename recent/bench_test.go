package recent_test

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

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/recent"
)

// benchMax is the Max of every list the benchmarks fill, and the classic
// script's cap.
const benchMax = 50

// An adder is one way to add a value to a list: make returns the function
// that adds one value to the list of key.
type adder struct {
	name string
	make func(b *testing.B, client *redis.Client, key string) func(ctx context.Context, value string) error
}

var benchAdders = []adder{
	{"classic", func(b *testing.B, client *redis.Client, key string) func(context.Context, string) error {
		return func(ctx context.Context, value string) error {
			return classicAdd.Run(ctx, client, []string{key}, value, time.Now().Unix(), benchMax).Err()
		}
	}},
	{"coalesced", func(b *testing.B, client *redis.Client, key string) func(context.Context, string) error {
		return benchList(b, client, key, false)
	}},
	{"alone", func(b *testing.B, client *redis.Client, key string) func(context.Context, string) error {
		return benchList(b, client, key, true)
	}},
}

// benchList returns the Add of one value to a List of key, Max benchMax,
// with coalescing off when alone.
func benchList(b *testing.B, client *redis.Client, key string, alone bool) func(context.Context, string) error {
	l, err := recent.New(client, recent.Config{Key: key, Max: benchMax, DisableCoalescing: alone})
	if err != nil {
		b.Fatal(err)
	}
	return func(ctx context.Context, value string) error { return l.Add(ctx, value) }
}

var benchRuns atomic.Int64

// BenchmarkAdd measures Adds of one value each, each a value never added
// before, to lists already holding Max (50) values, so that every Add
// drops the oldest: on a real Redis, by 1 caller and by 64 parallel
// callers on one list, and by 64 callers on a list each, through the
// classic script (ZADD, ZCARD, ZREMRANGEBYRANK), a List (coalescing on,
// the default) and a List with DisableCoalescing. It reports ops/s, the
// server's time per Add (redis-µs/op: EVALSHA's usec in INFO
// commandstats, which includes the commands its script runs, over the
// Adds) and the script calls per Add (scripts/op). Compare the rows of
// one run:
//
//	go test -run '^$' -bench BenchmarkAdd -benchtime 2s ./recent/
func BenchmarkAdd(b *testing.B) {
	client := redis.NewClient(&redis.Options{Addr: redistest.Addr(b), PoolSize: 128})
	defer client.Close()
	ctx := context.Background()
	for _, mode := range []struct {
		name     string
		callers  int
		eachList bool
	}{{"one-list/callers=1", 1, false}, {"one-list/callers=64", 64, false}, {"list-each/callers=64", 64, true}} {
		for _, a := range benchAdders {
			b.Run(mode.name+"/"+a.name, func(b *testing.B) {
				prefix := fmt.Sprintf("recent-bench:%d:", benchRuns.Add(1))
				adds := make([]func(context.Context, string) error, mode.callers)
				for i := range adds {
					if i == 0 || mode.eachList {
						adds[i] = a.make(b, client, prefix+strconv.Itoa(i))
						for j := range benchMax {
							if err := adds[i](ctx, fmt.Sprintf("fill:%03d:%09d", i, j)); err != nil {
								b.Fatal(err)
							}
						}
					} else {
						adds[i] = adds[0]
					}
				}
				if err := client.ConfigResetStat(ctx).Err(); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				if mode.callers == 1 {
					for i := 0; b.Loop(); i++ {
						if err := adds[0](ctx, fmt.Sprintf("item:%03d:%09d", 0, i)); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism(mode.callers / runtime.GOMAXPROCS(0))
					var workers atomic.Int64
					b.RunParallel(func(pb *testing.PB) {
						w := int(workers.Add(1) - 1)
						add := adds[w%mode.callers]
						for i := 0; pb.Next(); i++ {
							if err := add(ctx, fmt.Sprintf("item:%03d:%09d", w, i)); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.StopTimer()
				calls, usec, err := scriptStats(ctx, client)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
				b.ReportMetric(float64(usec)/float64(b.N), "redis-µs/op")
				b.ReportMetric(float64(calls)/float64(b.N), "scripts/op")
			})
		}
	}
}

// scriptStats returns the calls and usec of EVALSHA and EVAL from INFO
// commandstats.
func scriptStats(ctx context.Context, client *redis.Client) (calls, usec int64, err error) {
	info, err := client.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:")
		if !ok {
			if rest, ok = strings.CutPrefix(line, "cmdstat_eval:"); !ok {
				continue
			}
		}
		for _, field := range strings.Split(rest, ",") {
			name, value, _ := strings.Cut(field, "=")
			var n int64
			switch name {
			case "calls":
				n, err = strconv.ParseInt(value, 10, 64)
				calls += n
			case "usec":
				n, err = strconv.ParseInt(value, 10, 64)
				usec += n
			}
			if err != nil {
				return 0, 0, err
			}
		}
	}
	return calls, usec, nil
}
