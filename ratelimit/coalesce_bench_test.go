package ratelimit_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// redisRateAllowN is the GCRA script of github.com/go-redis/redis_rate/v10
// (v10.0.1, lua.go, allowN; itself from rwz/redis-gcra), copied verbatim
// as the baseline BenchmarkAllowOneKey measures Allow against. The
// library does not use it.
var redisRateAllowN = redis.NewScript(`
-- this script has side-effects, so it requires replicate commands mode
redis.replicate_commands()

local rate_limit_key = KEYS[1]
local burst = ARGV[1]
local rate = ARGV[2]
local period = ARGV[3]
local cost = tonumber(ARGV[4])

local emission_interval = period / rate
local increment = emission_interval * cost
local burst_offset = emission_interval * burst

-- redis returns time as an array containing two integers: seconds of the epoch
-- time (10 digits) and microseconds (6 digits). for convenience we need to
-- convert them to a floating point number. the resulting number is 16 digits,
-- bordering on the limits of a 64-bit double-precision floating point number.
-- adjust the epoch to be relative to Jan 1, 2017 00:00:00 GMT to avoid floating
-- point problems. this approach is good until "now" is 2,483,228,799 (Wed, 09
-- Sep 2048 01:46:39 GMT), when the adjusted value is 16 digits.
local jan_1_2017 = 1483228800
local now = redis.call("TIME")
now = (now[1] - jan_1_2017) + (now[2] / 1000000)

local tat = redis.call("GET", rate_limit_key)

if not tat then
  tat = now
else
  tat = tonumber(tat)
end

tat = math.max(tat, now)

local new_tat = tat + increment
local allow_at = new_tat - burst_offset

local diff = now - allow_at
local remaining = diff / emission_interval

if remaining < 0 then
  local reset_after = tat - now
  local retry_after = diff * -1
  return {
    0, -- allowed
    0, -- remaining
    tostring(retry_after),
    tostring(reset_after),
  }
end

local reset_after = new_tat - now
if reset_after > 0 then
  redis.call("SET", rate_limit_key, new_tat, "EX", math.ceil(reset_after))
end
local retry_after = -1
return {cost, remaining, tostring(retry_after), tostring(reset_after)}
`)

// redisRateAllow runs redisRateAllowN as redis_rate's Limiter.Allow does,
// with its arguments and the parsing of its reply, on redis_rate's key
// for key.
func redisRateAllow(ctx context.Context, client redis.UniversalClient, key string, limit ratelimit.Limit) (bool, error) {
	burst := limit.Burst
	if burst == 0 {
		burst = limit.Rate
	}
	v, err := redisRateAllowN.Run(ctx, client, []string{"rate:" + key}, burst, limit.Rate, limit.Period.Seconds(), 1).Result()
	if err != nil {
		return false, err
	}
	values := v.([]any)
	if _, err := strconv.ParseFloat(values[2].(string), 64); err != nil {
		return false, err
	}
	if _, err := strconv.ParseFloat(values[3].(string), 64); err != nil {
		return false, err
	}
	return values[0].(int64) > 0, nil
}

// hotLimits are the limits BenchmarkAllowOneKey runs on its one key: a
// GCRA limit that allows every call the benchmark makes (a million a
// second, far more than it makes), so that every call writes; one that
// refuses all but its first 10 (10 an hour), so that nearly none does;
// and a FixedWindow that allows every call, for which redis_rate has no
// counterpart.
var hotLimits = []struct {
	name  string
	limit ratelimit.Limit
}{
	{"allowed", ratelimit.PerSecond(1_000_000)},
	{"refused", ratelimit.Limit{Rate: 10, Period: time.Hour}},
	{"window", ratelimit.Limit{Rate: 1 << 40, Period: time.Hour, Algorithm: ratelimit.FixedWindow}},
}

// BenchmarkAllowOneKey measures Allow on ONE key of a real Redis, by 1
// caller and by 64 in parallel, coalesced (the default), uncoalesced
// (Config.DisableCoalescing) and, as the baseline for GCRA,
// go-redis/redis_rate's script sent verbatim by go-redis. It reports calls per second (ops/s),
// Redis's time per call (redis-µs/op: EVALSHA's and EVAL's usec in INFO
// commandstats, which include the commands the scripts run, over the
// calls), script calls per call (scripts/op, below 1 when calls share a
// script call) and the median time of a call as its caller sees it
// (p50-µs):
//
//	go test -run '^$' -bench BenchmarkAllowOneKey -benchtime 3s ./ratelimit/
func BenchmarkAllowOneKey(b *testing.B) {
	client := redis.NewClient(&redis.Options{Addr: redistest.Addr(b), PoolSize: 128})
	defer client.Close()
	coalesced, err := ratelimit.New(client, ratelimit.Config{})
	if err != nil {
		b.Fatal(err)
	}
	uncoalesced, err := ratelimit.New(client, ratelimit.Config{DisableCoalescing: true})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	variants := []struct {
		name  string
		allow func(ctx context.Context, key string, limit ratelimit.Limit) error
	}{
		{"coalesced", func(ctx context.Context, key string, limit ratelimit.Limit) error {
			_, err := coalesced.Allow(ctx, key, limit)
			return err
		}},
		{"uncoalesced", func(ctx context.Context, key string, limit ratelimit.Limit) error {
			_, err := uncoalesced.Allow(ctx, key, limit)
			return err
		}},
		{"redis_rate", func(ctx context.Context, key string, limit ratelimit.Limit) error {
			_, err := redisRateAllow(ctx, client, key, limit)
			return err
		}},
	}
	for _, hl := range hotLimits {
		for _, callers := range []int{1, 64} {
			for _, v := range variants {
				if v.name == "redis_rate" && hl.limit.Algorithm != ratelimit.GCRA {
					continue
				}
				b.Run(fmt.Sprintf("%s/callers=%d/%s", hl.name, callers, v.name), func(b *testing.B) {
					key := fmt.Sprintf("rl-bench:hot:%d", benchRuns.Add(1))
					if err := v.allow(ctx, key, hl.limit); err != nil { // loads the script
						b.Fatal(err)
					}
					if err := client.ConfigResetStat(ctx).Err(); err != nil {
						b.Fatal(err)
					}
					var mu sync.Mutex
					var took []time.Duration
					timed := func(calls func(yield func() bool)) {
						var mine []time.Duration
						for range calls {
							t0 := time.Now()
							if err := v.allow(ctx, key, hl.limit); err != nil {
								b.Error(err)
								return
							}
							mine = append(mine, time.Since(t0))
						}
						mu.Lock()
						took = append(took, mine...)
						mu.Unlock()
					}
					start := time.Now()
					b.ResetTimer()
					if callers == 1 {
						timed(func(yield func() bool) {
							for range b.N {
								if !yield() {
									return
								}
							}
						})
					} else {
						b.SetParallelism((callers + parallelism() - 1) / parallelism())
						b.RunParallel(func(pb *testing.PB) {
							timed(func(yield func() bool) {
								for pb.Next() && yield() {
								}
							})
						})
					}
					b.StopTimer()
					elapsed := time.Since(start)
					reportScripts(ctx, b, client, b.N, elapsed)
					slices.Sort(took)
					if len(took) > 0 {
						b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1000, "p50-µs")
					}
				})
			}
		}
	}
}

// BenchmarkBatchScript measures the batch scripts alone on a real Redis,
// by batch size, each batch's calls all allowed (the loop's longest run,
// and a write), so that the time one batch holds Redis sets the most
// calls a batch may carry:
//
//	go test -run '^$' -bench BenchmarkBatchScript ./ratelimit/
func BenchmarkBatchScript(b *testing.B) {
	client := redis.NewClient(&redis.Options{Addr: redistest.Addr(b)})
	defer client.Close()
	limiter, err := ratelimit.New(client, ratelimit.Config{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	limits := []struct {
		name  string
		limit ratelimit.Limit
	}{
		{"gcra whole share", ratelimit.Limit{Rate: 1_000_000, Period: time.Second, Burst: 1 << 40}},
		{"gcra share not whole", ratelimit.Limit{Rate: 3_000_000, Period: 7 * time.Second, Burst: 1 << 40}},
		{"fixed window", ratelimit.Limit{Rate: 1 << 50, Period: time.Hour, Algorithm: ratelimit.FixedWindow}},
	}
	for _, bl := range limits {
		for _, size := range []int{2, 16, 64, 256, 1024} {
			b.Run(fmt.Sprintf("%s/calls=%d", bl.name, size), func(b *testing.B) {
				key := fmt.Sprintf("rl-bench:batch:%d", benchRuns.Add(1))
				if _, err := limiter.AllowBatch(ctx, key, bl.limit, 1, size); err != nil {
					b.Fatal(err)
				}
				if err := client.ConfigResetStat(ctx).Err(); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					rs, err := limiter.AllowBatch(ctx, key, bl.limit, 1, size)
					if err != nil {
						b.Fatal(err)
					}
					if !rs[size-1].Allowed {
						b.Fatal("a call of the batch was refused")
					}
				}
				b.StopTimer()
				calls, usec, err := scriptStats(ctx, client)
				if err != nil {
					b.Fatal(err)
				}
				if calls > 0 {
					b.ReportMetric(float64(usec)/float64(calls), "redis-µs/batch")
					b.ReportMetric(float64(usec)/float64(calls)/float64(size), "redis-µs/call")
				}
			})
		}
	}
}

// parallelism is GOMAXPROCS, by which RunParallel multiplies
// SetParallelism's goroutines.
func parallelism() int { return runtime.GOMAXPROCS(0) }

// reportScripts reports, for n calls made in elapsed, calls per second,
// Redis's time per call and script calls per call.
func reportScripts(ctx context.Context, b *testing.B, client *redis.Client, n int, elapsed time.Duration) {
	calls, usec, err := scriptStats(ctx, client)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(usec)/float64(n), "redis-µs/op")
	b.ReportMetric(float64(calls)/float64(n), "scripts/op")
}

// scriptStats returns the calls and usec of EVALSHA and EVAL together,
// from INFO commandstats.
func scriptStats(ctx context.Context, client *redis.Client) (calls, usec int64, err error) {
	calls, usec, err = commandStats(ctx, client, "evalsha")
	if err != nil {
		return 0, 0, err
	}
	c, u, err := commandStats(ctx, client, "eval")
	return calls + c, usec + u, err
}
