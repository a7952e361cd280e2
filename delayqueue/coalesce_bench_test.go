package delayqueue_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// BenchmarkCrowd measures tasks through one queue with 64 producers
// pushing tasks due at once, never more than 256 ahead of the consumers,
// and Run's 64 workers taking and acking them, with coalescing on and
// off, on a Redis of its own. It reports tasks/s, the Redis µs per task
// (the usec of the script calls in INFO commandstats over the tasks) and
// the script calls per task, and the share of script calls that ran 200µs
// or more and the longest, from the slow log; with -v it logs the
// commands the scripts run per task.
//
//	go test -run x -bench Crowd -benchtime 20000x ./delayqueue
func BenchmarkCrowd(b *testing.B) {
	for _, off := range []bool{false, true} {
		name := "coalescing"
		if off {
			name = "single calls"
		}
		b.Run(name, func(b *testing.B) {
			s := redistest.StartServer(b)
			client := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 256})
			b.Cleanup(func() { client.Close() })
			crowd(b, client, off, 64, 64, 256)
		})
	}
}

// crowd runs b.N tasks through a queue of its own on client: producers
// pushing, workers consumers in Run, at most backlog tasks pushed and not
// yet delivered.
func crowd(b *testing.B, client *redis.Client, off bool, producers, workers, backlog int) {
	ctx := context.Background()
	q, err := delayqueue.New(client, delayqueue.Config{Key: "crowd", DisableCoalescing: off})
	if err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 16)
	// Warm up: scripts loaded, consumers subscribed.
	tokens := make(chan struct{}, backlog)
	var taken atomic.Int64
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.Run(runCtx, workers, func(context.Context, delayqueue.Message) error {
			taken.Add(1)
			<-tokens
			return nil
		})
	}()
	drive := func(n int64) {
		var next atomic.Int64
		var wg sync.WaitGroup
		start := taken.Load()
		for range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= n {
					tokens <- struct{}{}
					if _, err := q.Push(ctx, payload, 0); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		for end := time.Now().Add(time.Minute); taken.Load() < start+n && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		if got := taken.Load() - start; got < n {
			b.Fatalf("%d of %d tasks taken", got, n)
		}
	}
	drive(int64(4 * producers))
	if err := client.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	// The slow log keeps every script call of 200µs or more, to bound
	// the longest batch.
	client.ConfigSet(ctx, "slowlog-max-len", "100000")
	client.ConfigSet(ctx, "slowlog-log-slower-than", "200")
	client.SlowLogReset(ctx)
	b.ResetTimer()
	drive(int64(b.N))
	b.StopTimer()
	stats := commandStats(b, client)
	stop()
	<-done
	n := float64(b.N)
	scripts := stats["evalsha"].usec + stats["eval"].usec
	calls := stats["evalsha"].calls + stats["eval"].calls
	b.ReportMetric(n/b.Elapsed().Seconds(), "tasks/s")
	b.ReportMetric(float64(scripts)/n, "redis-µs/task")
	b.ReportMetric(float64(calls)/n, "calls/task")
	b.ReportMetric(0, "ns/op")
	slow, err := client.SlowLogGet(ctx, -1).Result()
	if err != nil {
		b.Fatal(err)
	}
	var longest time.Duration
	for _, e := range slow {
		longest = max(longest, e.Duration)
	}
	b.ReportMetric(float64(len(slow))/float64(calls), "calls≥200µs/call")
	b.ReportMetric(float64(longest.Microseconds()), "max-call-µs")
	var names []string
	for name := range stats {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return stats[names[i]].usec > stats[names[j]].usec })
	var lines []string
	for _, name := range names {
		st := stats[name]
		lines = append(lines, fmt.Sprintf("%s %.2f calls %.2f µs", name, float64(st.calls)/n, float64(st.usec)/n))
	}
	b.Logf("per task: %s", strings.Join(lines, "; "))
}

// A cmdStat is a command's calls and usec in INFO commandstats.
type cmdStat struct{ calls, usec int64 }

// commandStats reads INFO commandstats, by command name.
func commandStats(b *testing.B, client *redis.Client) map[string]cmdStat {
	info, err := client.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]cmdStat{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":")
		if !ok || name == "info" || name == "config|resetstat" {
			continue
		}
		var st cmdStat
		for _, field := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(field, "=")
			switch k {
			case "calls":
				st.calls, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				st.usec, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		out[name] = st
	}
	return out
}
