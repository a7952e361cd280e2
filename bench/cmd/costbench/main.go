// Costbench measures what every slotlimit primitive costs Redis and its
// callers beside its peers, in one run against one Redis, and prints one
// markdown table of targets, each a ratio with its verdict, then every
// variant at each number of callers, the per-command breakdown that
// bounds each ratio, and SVG plots.
//
// It runs every variant on one go-redis client made with the default
// options (the delay queue's two on a client each), in -rounds rounds (3)
// of phases bounded by -duration (2s) and -max-ops, the variants of a row
// taking turns in every round:
//
//   - on one key, at 1, -workers (64) and -crowd (256) callers: the
//     limiter's TryAcquire+Release pairs of distinct holders, against a
//     minimal ZSET lease script pair and raw INCR+DECR, and beside them
//     the limiter with Config.DisableCoalescing; GCRA Allow of
//     -hot-rate per second (10,000, burst 100), a rate the load passes,
//     so that the key both allows and refuses, against
//     go-redis/redis_rate with the same limit; and the red packet's Grab,
//     each phase on a packet of its own of -shares shares (100,000), each
//     grab by a user of its own, against the classic grab script;
//   - at -workers callers, each on keys of its own, as before coalescing:
//     the lock's TryLock+Unlock against SET NX PX with a compare-and-delete
//     script, bsm/redislock and go-redsync/redsync; fixed-window Allow of
//     -rate per hour (10), each key called -calls-per-key times (12) in a
//     row, against the classic INCR + EXPIRE-on-first-hit script; the
//     recent list's Add on lists of -recent-max items (50) filled first,
//     against the classic ZADD/ZCARD/ZREMRANGEBYRANK script;
//   - the delay queue, per task pushed, delivered and acked by -workers
//     producers and consumers, no more than -backlog (256) ahead, against
//     hibiken/asynq with its forwarder at 100 ms; then -tasks tasks (5,000)
//     due in 100 ms each, for each one's due-to-run latency.
//
// Redis µs per operation is the server time (INFO commandstats, CONFIG
// RESETSTAT before every phase) of the top-level commands each variant's
// client sent; p50 is the median time of one call (of one pair, for a
// pair) as its caller saw it. A row's ratio is the median of its rounds'
// ratios, and its figures are that round's.
//
// Without -redis it starts its own redis-server on a free loopback port,
// which needs redis-server on PATH, and stops it when done. From bench/:
//
//	go run ./cmd/costbench -o ../BENCHMARKS.md
//
// With -o it also writes the plots to -plots (docs/bench beside the
// report). It resets the server's statistics before each phase, so point
// it only at a Redis of its own. Its keys begin with "costbench:" and a
// random tag (asynq's with "asynq:{" before them, redis_rate's with
// "rate:", the classic red packets' with "red_packet_"), and it deletes
// them when done.
package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// settings are costbench's own flags, beside the harness's.
type settings struct {
	crowd       int           // callers of the largest crowd on one key
	hotRate     int64         // the hot GCRA key's events per second
	rate        int64         // events per hour of the fixed window
	callsPerKey int64         // fixed-window calls each worker makes on a key before its next
	recentMax   int64         // items in every recent list
	recentUsers int           // lists of each worker, per recent variant
	shares      int           // shares of each packet, one per grab phase
	backlog     int           // most tasks pushed and not yet taken
	tasks       int           // tasks of each due-to-run phase
	due         time.Duration // each of those tasks' delay
	plots       string        // directory of the SVG plots
}

func defaultSettings() settings {
	return settings{crowd: 256, hotRate: 10_000, rate: 10, callsPerKey: 12, recentMax: 50, recentUsers: 4,
		shares: 100_000, backlog: 256, tasks: 5000, due: 100 * time.Millisecond}
}

func (s *settings) registerFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.crowd, "crowd", s.crowd, "callers of the largest crowd on one key")
	fs.Int64Var(&s.hotRate, "hot-rate", s.hotRate, "events per second of the hot GCRA key")
	fs.Int64Var(&s.rate, "rate", s.rate, "events per hour of the fixed window")
	fs.Int64Var(&s.callsPerKey, "calls-per-key", s.callsPerKey, "fixed-window calls a worker makes on each key, in a row, before it moves to a new one")
	fs.Int64Var(&s.recentMax, "recent-max", s.recentMax, "items in every recent list")
	fs.IntVar(&s.recentUsers, "recent-users", s.recentUsers, "recent lists of each worker, per variant")
	fs.IntVar(&s.shares, "shares", s.shares, "shares of each red packet; every grab phase has one of its own")
	fs.IntVar(&s.backlog, "backlog", s.backlog, "most tasks pushed and not yet taken, in the delay-queue phases")
	fs.IntVar(&s.tasks, "tasks", s.tasks, "tasks of each due-to-run phase")
	fs.DurationVar(&s.due, "due", s.due, "delay of each task in the due-to-run phases")
	fs.StringVar(&s.plots, "plots", s.plots, "`directory` of the SVG plots; empty: docs/bench beside -o, and none without -o")
}

// check returns an error naming the first setting out of range.
func (s settings) check() error {
	switch {
	case s.crowd < 1 || s.hotRate < 1 || s.rate < 1 || s.callsPerKey < 1:
		return fmt.Errorf("-crowd, -hot-rate, -rate and -calls-per-key must be at least 1")
	case s.recentMax < 1 || s.recentUsers < 1 || s.shares < 1:
		return fmt.Errorf("-recent-max, -recent-users and -shares must be at least 1")
	case s.backlog < 1 || s.tasks < 1 || s.due <= 0:
		return fmt.Errorf("-backlog and -tasks must be at least 1, -due positive")
	}
	return nil
}

// A bench is the suite: what every scenario shares, and the figures they
// keep for the report.
type bench struct {
	settings
	*harness.Env
	scripts scripts
	// Each row's results, by callers (index into callers()), then by
	// variant, the library first.
	limiter, gcra, grab, lock, window, recent, queue, dueRun [][]result
	asynqQueues                                              []string // the run's queues on asynq's list, taken off when done
}

func main() {
	b := &bench{settings: defaultSettings()}
	b.registerFlags(flag.CommandLine)
	harness.Main("costbench", b)
}

// callers returns the numbers of callers of the rows on one key.
func (b *bench) callers() []int {
	return []int{1, b.Workers, b.crowd}
}

// Steps implements harness.Suite. Every row but the delay queue's runs on
// one client made with go-redis's default options, which replaces the
// harness's load client (its -pool is not used).
func (b *bench) Steps(env *harness.Env) []harness.Step {
	b.Env = env
	b.Client, b.Hook = env.NewClient(0)
	step := func(name string, rs *[][]result, run func(context.Context) ([][]result, error)) harness.Step {
		return harness.Step{Name: name, Run: func(ctx context.Context) (err error) { *rs, err = run(ctx); return }}
	}
	return []harness.Step{
		{Name: "setup", Run: b.setup},
		step("limiter", &b.limiter, b.limiterRow),
		step("ratelimit GCRA, one key", &b.gcra, b.gcraRow),
		step("redpacket", &b.grab, b.grabRow),
		step("lock", &b.lock, b.lockRow),
		step("ratelimit fixed window", &b.window, b.windowRow),
		step("recent", &b.recent, b.recentRow),
		step("delayqueue", &b.queue, b.queueRow),
		step("delayqueue, due to run", &b.dueRun, b.dueRow),
		{Name: "plots", Run: b.writePlots},
		{Name: "clean-up", Run: b.cleanup},
	}
}

// setup checks the settings and loads the scripts the benchmark runs by
// EVALSHA itself.
func (b *bench) setup(ctx context.Context) error {
	if err := b.check(); err != nil {
		return err
	}
	b.scripts = newScripts()
	for _, s := range b.scripts.all() {
		if err := s.Load(ctx, b.Admin); err != nil {
			return err
		}
	}
	return nil
}

// plotDir returns the directory of the plots, or "" for none.
func (b *bench) plotDir() string {
	switch {
	case b.plots != "":
		return b.plots
	case b.Out != "":
		return filepath.Join(filepath.Dir(b.Out), "docs", "bench")
	}
	return ""
}
