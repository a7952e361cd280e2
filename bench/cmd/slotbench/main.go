// Slotbench measures the slotlimit Limiter against a real Redis, beside
// bare go-redis baselines in the same run, and prints a markdown report of
// the figures and of the targets they are held to.
//
// It runs, in one process on one pool of connections:
//
//   - no contention: TryAcquire+Release pairs of distinct holders on one
//     key, against (a) INCR+DECR, (c) the classic two counter scripts and
//     (b) the library's own acquire and release scripts by bare EVALSHA;
//   - the Redis time of each script (INFO commandstats usec_per_call), each
//     script alone in its phase, including a full key whose tries are all
//     refused;
//   - contention: limit 60, -contenders workers (200) holding each slot
//     for each of -hold (2ms, then 20ms), by polling TryAcquire and by
//     Acquire;
//   - hand-off latency: on an idle server, from a holder's Release
//     returning to a queued waiter's Acquire returning, beside PING round
//     trips on the same client, and the same for a polling waiter;
//   - many keys: one TryAcquire+Release on each of -keys area codes;
//   - MEMORY USAGE of a key with 60 holders, and of an idle key;
//   - a burst of 100 holders by TryAcquireBatch/ReleaseBatch against 100
//     single calls;
//   - allocations per call, against the go-redis calls underneath.
//
// Without -redis it starts its own redis-server on a free loopback port,
// which needs redis-server on PATH, and stops it when done. Baseline (b)
// replays the EVALSHA calls the library is seen to send, so it follows
// the library's scripts as they change. From bench/:
//
//	go run ./cmd/slotbench
//	go run ./cmd/slotbench -redis 127.0.0.1:6379 -o limiter.md
//
// It resets the server's statistics (CONFIG RESETSTAT) before each phase,
// so point it only at a Redis of its own. Its keys begin with
// "slotbench:" and a random tag, and it deletes them when done.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// settings are slotbench's own flags, beside the harness's.
type settings struct {
	contenders int
	holds      harness.Durations
	keys       int
	handoffs   int
}

func defaultSettings() settings {
	return settings{contenders: 200, holds: harness.Durations{2 * time.Millisecond, 20 * time.Millisecond}, keys: 100000, handoffs: 300}
}

func (s *settings) registerFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.contenders, "contenders", s.contenders, "workers contending for 60 slots")
	fs.Var(&s.holds, "hold", "how long a contender holds its slot: a `list` of durations, each a contention phase")
	fs.IntVar(&s.keys, "keys", s.keys, "area codes in the many-keys phase")
	fs.IntVar(&s.handoffs, "handoffs", s.handoffs, "rounds of each hand-off mode, at most 10 times -duration")
}

// check returns an error naming the first setting out of range.
func (s settings) check() error {
	switch {
	case s.contenders < 1:
		return fmt.Errorf("-contenders %d: must be at least 1", s.contenders)
	case len(s.holds) == 0:
		return errors.New("-hold: give at least one duration")
	case s.keys < 1:
		return fmt.Errorf("-keys %d: must be at least 1", s.keys)
	case s.handoffs < 1:
		return fmt.Errorf("-handoffs %d: must be at least 1", s.handoffs)
	}
	return nil
}

// A bench is the Limiter's suite: what every scenario shares, and the
// figures they keep for the report.
type bench struct {
	settings
	*harness.Env
	scripts scripts
	results
}

func main() {
	b := &bench{settings: defaultSettings()}
	b.registerFlags(flag.CommandLine)
	harness.Main("slotbench", b)
}

// Steps implements harness.Suite. The hand-off phase runs first, while
// the server is idle and before any load has been on it.
func (b *bench) Steps(env *harness.Env) []harness.Step {
	b.Env = env
	steps := []harness.Step{
		{Name: "setup", Run: b.setup},
		{Name: "hand-off latency", Run: func(ctx context.Context) (err error) { b.handed, err = b.handoff(ctx); return }},
		{Name: "allocations", Run: func(ctx context.Context) (err error) { b.allocs, err = b.allocations(ctx); return }},
		{Name: "no contention", Run: func(ctx context.Context) (err error) { b.pairs, err = b.noContention(ctx); return }},
		{Name: "script costs", Run: func(ctx context.Context) (err error) { b.costs, err = b.scriptCosts(ctx); return }},
	}
	for _, hold := range b.holds {
		steps = append(steps,
			harness.Step{Name: fmt.Sprintf("contention, %v holds, polling", hold), Run: func(ctx context.Context) error { return b.appendContended(ctx, hold, false) }},
			harness.Step{Name: fmt.Sprintf("contention, %v holds, Acquire", hold), Run: func(ctx context.Context) error { return b.appendContended(ctx, hold, true) }},
		)
	}
	return append(steps,
		harness.Step{Name: "many keys", Run: func(ctx context.Context) (err error) { b.many, err = b.manyKeys(ctx); return }},
		harness.Step{Name: "memory", Run: func(ctx context.Context) (err error) { b.mem, err = b.memory(ctx); return }},
		harness.Step{Name: "batch, one caller", Run: func(ctx context.Context) error { return b.appendBursts(ctx, 1) }},
		harness.Step{Name: "batch, many callers", Run: func(ctx context.Context) error { return b.appendBursts(ctx, b.Workers) }},
	)
}

func (b *bench) appendContended(ctx context.Context, hold time.Duration, wait bool) error {
	c, err := b.contention(ctx, hold, wait)
	b.contended = append(b.contended, c)
	return err
}

func (b *bench) appendBursts(ctx context.Context, callers int) error {
	x, err := b.runBursts(ctx, callers)
	b.bursts = append(b.bursts, x)
	return err
}

// setup checks the settings, reads the library's acquire and release
// calls, loads the classic scripts, and has the load client's hook count
// the calls of each.
func (b *bench) setup(ctx context.Context) error {
	if err := b.check(); err != nil {
		return err
	}
	b.scripts = scripts{
		seedAcquire: harness.NewScript(seedAcquire),
		seedRelease: harness.NewScript(seedRelease),
		twoReads:    harness.NewScript(twoReads),
	}
	var err error
	b.scripts.acquire, b.scripts.release, err = b.capture(ctx, slotlimit.Config{Key: b.Key("check"), Limit: 1, TTL: leaseTTL})
	if err != nil {
		return err
	}
	for _, s := range []harness.Script{b.scripts.seedAcquire, b.scripts.seedRelease} {
		if err := s.Load(ctx, b.Admin); err != nil {
			return err
		}
	}
	for _, sha := range []string{b.scripts.acquire.SHA, b.scripts.release.SHA, b.scripts.seedAcquire.SHA, b.scripts.seedRelease.SHA} {
		b.Hook.Watch(sha)
	}
	return nil
}

// capture returns the calls the library sends for cfg, checked to be of
// the shape rawLease replays.
func (b *bench) capture(ctx context.Context, cfg slotlimit.Config) (acquire, release harness.Call, err error) {
	acquire, release, err = capture(ctx, b.Env, cfg, "slotbench-capture")
	if err == nil {
		err = checkArity(acquire, release)
	}
	return acquire, release, err
}
