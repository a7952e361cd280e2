// Costbench measures the Redis cost of every slotlimit primitive beside
// its baseline, in one run against one Redis, and prints one markdown
// table of the ratios, each with its target, then the per-command
// breakdown that bounds each ratio.
//
// It runs, in one process, every variant on one go-redis client made with
// the default options (the delay queue's two on a client each), in
// -rounds rounds (3) of phases bounded by -duration and -max-ops, the
// variants of a row taking turns in every round, with -workers goroutines
// (64):
//
//   - limiter: TryAcquire+Release pairs of distinct holders on one key,
//     against a minimal ZSET lease script pair (acquire: ZREMRANGEBYSCORE,
//     ZCARD, ZADD, PEXPIRE; release: ZREM) and raw INCR+DECR;
//   - lock: TryLock+Unlock, each worker on a key of its own, against SET
//     NX PX with a compare-and-delete script, bsm/redislock and
//     go-redsync/redsync;
//   - ratelimit: Allow with GCRA against go-redis/redis_rate, and with
//     FixedWindow against the classic INCR + EXPIRE-on-first-hit script,
//     all of -rate (10) per hour, each worker calling each of its keys
//     -calls-per-key times (12) in a row, so that the mix of new keys,
//     allowed calls and refusals is the same for every variant;
//   - redpacket: Grab against the classic grab script, each grab by a
//     user of its own, on packets that no phase sells out;
//   - recent: Add against the classic ZADD/ZCARD/ZREMRANGEBYRANK script,
//     on lists of -recent-max items (50) filled first, so that every Add
//     drops the oldest;
//   - delayqueue: Push and Run, per task pushed, delivered and acked,
//     against hibiken/asynq's Enqueue and Server with its forwarder
//     (DelayedTaskCheckInterval) at 100 ms, -workers producers pushing
//     tasks due at once and -workers consumers, no more than -backlog
//     (256) tasks pushed and not yet taken.
//
// Redis µs per operation is the server time (INFO commandstats, CONFIG
// RESETSTAT before every phase) of the top-level commands each variant's
// client sent. A row's ratio is the median of its rounds' ratios, and its
// figures are that round's, so that a stall of a shared machine in one
// round stays out of the table; the breakdown lists, for that round,
// every command the server ran per operation, those inside scripts and
// EXEC included, and the scripts' own overhead.
//
// Without -redis it starts its own redis-server on a free loopback port,
// which needs redis-server on PATH, and stops it when done. From bench/:
//
//	go run ./cmd/costbench -o ../BENCHMARKS.md
//
// It resets the server's statistics before each phase, so point it only
// at a Redis of its own. Its keys begin with "costbench:" and a random tag
// (asynq's with "asynq:{" before them, redis_rate's with "rate:", the
// classic red packets' with "red_packet_"), and it deletes them when done.
package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// settings are costbench's own flags, beside the harness's.
type settings struct {
	rate        int64 // events per hour, every rate limiter's limit and burst
	callsPerKey int64 // calls each worker makes on a rate-limit key before its next
	recentMax   int64 // items in every recent list
	recentUsers int   // lists of each worker, per recent variant
	packets     int   // red packets of each grab variant
	shares      int   // shares in each of them
	backlog     int   // most tasks pushed and not yet taken
}

func defaultSettings() settings {
	return settings{rate: 10, callsPerKey: 12, recentMax: 50, recentUsers: 4, packets: 20, shares: 10_000, backlog: 256}
}

func (s *settings) registerFlags(fs *flag.FlagSet) {
	fs.Int64Var(&s.rate, "rate", s.rate, "every rate limiter's limit: events per hour, and its burst")
	fs.Int64Var(&s.callsPerKey, "calls-per-key", s.callsPerKey, "rate-limit calls a worker makes on each key, in a row, before it moves to a new one")
	fs.Int64Var(&s.recentMax, "recent-max", s.recentMax, "items in every recent list")
	fs.IntVar(&s.recentUsers, "recent-users", s.recentUsers, "recent lists of each worker, per variant")
	fs.IntVar(&s.packets, "packets", s.packets, "red packets each grab variant grabs from, over the run")
	fs.IntVar(&s.shares, "shares", s.shares, "shares in each of those packets")
	fs.IntVar(&s.backlog, "backlog", s.backlog, "most tasks pushed and not yet taken, in the delay-queue phases")
}

// check returns an error naming the first setting out of range.
func (s settings) check() error {
	switch {
	case s.rate < 1:
		return fmt.Errorf("-rate %d: must be at least 1", s.rate)
	case s.callsPerKey < 1:
		return fmt.Errorf("-calls-per-key %d: must be at least 1", s.callsPerKey)
	case s.recentMax < 1:
		return fmt.Errorf("-recent-max %d: must be at least 1", s.recentMax)
	case s.recentUsers < 1:
		return fmt.Errorf("-recent-users %d: must be at least 1", s.recentUsers)
	case s.packets < 1 || s.shares < 1:
		return fmt.Errorf("-packets %d and -shares %d: must be at least 1", s.packets, s.shares)
	case s.backlog < 1:
		return fmt.Errorf("-backlog %d: must be at least 1", s.backlog)
	}
	return nil
}

// A bench is the suite: what every scenario shares, and the figures they
// keep for the report.
type bench struct {
	settings
	*harness.Env
	scripts scripts
	results
}

// results are every figure of one run: each row's variants, the library
// first.
type results struct {
	limiter, lock, gcra, window, grab, recent, queue []result
}

func main() {
	b := &bench{settings: defaultSettings()}
	b.registerFlags(flag.CommandLine)
	harness.Main("costbench", b)
}

// Steps implements harness.Suite. Every row but the delay queue's runs on
// one client made with go-redis's default options, which replaces the
// harness's load client (its -pool is not used).
func (b *bench) Steps(env *harness.Env) []harness.Step {
	b.Env = env
	b.Client, b.Hook = env.NewClient(0)
	return []harness.Step{
		{Name: "setup", Run: b.setup},
		{Name: "limiter", Run: func(ctx context.Context) (err error) { b.limiter, err = b.limiterRow(ctx); return }},
		{Name: "lock", Run: func(ctx context.Context) (err error) { b.lock, err = b.lockRow(ctx); return }},
		{Name: "ratelimit GCRA", Run: func(ctx context.Context) (err error) { b.gcra, err = b.gcraRow(ctx); return }},
		{Name: "ratelimit fixed window", Run: func(ctx context.Context) (err error) { b.window, err = b.windowRow(ctx); return }},
		{Name: "redpacket", Run: func(ctx context.Context) (err error) { b.grab, err = b.grabRow(ctx); return }},
		{Name: "recent", Run: func(ctx context.Context) (err error) { b.recent, err = b.recentRow(ctx); return }},
		{Name: "delayqueue", Run: func(ctx context.Context) (err error) { b.queue, err = b.queueRow(ctx); return }},
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
