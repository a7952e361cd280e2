// Ratebench measures the slotlimit ratelimit package against a real
// Redis, beside the classic fixed-window script, the package's own scripts
// by bare EVALSHA and go-redis/redis_rate in the same run, and prints a
// markdown report of the figures and of the targets they are held to.
//
// It runs, in one process on one pool of connections:
//
//   - Allow calls on -workers goroutines (64), for each of: the classic
//     script, verbatim, by EVALSHA; Limiter.Allow with FixedWindow and
//     with GCRA; the script each of those runs, by bare EVALSHA with the
//     arguments the library is seen to send; and
//     github.com/go-redis/redis_rate/v10's Allow; in -rounds rounds (3)
//     that the variants take in turns, each variant's Redis time summed
//     over its top-level commands (EVALSHA), checked against those its
//     client sent;
//   - allocations per call, against go-redis EvalSha.
//
// Every variant has a limit of -rate events (10) per hour, and each
// worker calls each of its keys -calls-per-key times (12) in a row before
// it moves to a key never used: of each key's calls, the first finds no
// key, the first -rate are allowed and the rest refused, whatever the
// machine's speed.
//
// Without -redis it starts its own redis-server on a free loopback port,
// which needs redis-server on PATH, and stops it when done. From bench/:
//
//	go run ./cmd/ratebench
//	go run ./cmd/ratebench -o ../ratelimit/BENCHMARKS.md
//
// It resets the server's statistics (CONFIG RESETSTAT) before each phase,
// so point it only at a Redis of its own. Its keys begin with "ratebench:"
// and a random tag (redis_rate's with "rate:" before them), and it
// deletes them when done.
package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

const (
	defaultAllocRuns = 1000 // how many calls testing.AllocsPerRun averages over
	warmupCalls      = 4    // calls per worker of each variant before the load
)

// settings are ratebench's own flags, beside the harness's.
type settings struct {
	rate        int64 // events per window, every variant's limit
	callsPerKey int64 // calls each worker makes on a key before its next
	allocRuns   int
}

func defaultSettings() settings {
	return settings{rate: 10, callsPerKey: 12, allocRuns: defaultAllocRuns}
}

func (s *settings) registerFlags(fs *flag.FlagSet) {
	fs.Int64Var(&s.rate, "rate", s.rate, "every variant's limit: events per hour, and its burst")
	fs.Int64Var(&s.callsPerKey, "calls-per-key", s.callsPerKey, "calls a worker makes on each key, in a row, before it moves to a new one")
	fs.IntVar(&s.allocRuns, "alloc-runs", s.allocRuns, "calls each allocation figure averages over")
}

// check returns an error naming the first setting out of range.
func (s settings) check() error {
	switch {
	case s.rate < 1:
		return fmt.Errorf("-rate %d: must be at least 1", s.rate)
	case s.callsPerKey < 1:
		return fmt.Errorf("-calls-per-key %d: must be at least 1", s.callsPerKey)
	case s.allocRuns < 1:
		return fmt.Errorf("-alloc-runs %d: must be at least 1", s.allocRuns)
	}
	return nil
}

// A bench is the rate limiter's suite: what every scenario shares, and
// the figures they keep for the report.
type bench struct {
	settings
	*harness.Env
	seed     harness.Script
	captured captured
	variants []*variant // the classic script first
	results
}

// results are every figure of one run.
type results struct {
	calls  []harness.CallResult
	allocs []allocRow
}

func main() {
	b := &bench{settings: defaultSettings()}
	b.registerFlags(flag.CommandLine)
	harness.Main("ratebench", b)
}

// Steps implements harness.Suite.
func (b *bench) Steps(env *harness.Env) []harness.Step {
	b.Env = env
	return []harness.Step{
		{Name: "setup", Run: b.setup},
		{Name: "Allow calls", Run: func(ctx context.Context) (err error) { b.calls, err = b.RunCalls(ctx, b.callers(), b.Workers); return }},
		{Name: "allocations", Run: func(ctx context.Context) (err error) { b.allocs, err = b.allocations(ctx); return }},
	}
}

// setup checks the settings, loads the classic script, reads the calls the
// library sends, makes the variants, and runs a few calls of each on
// every worker, unmeasured, so that every script is in the server's cache
// and the pool has its connections before the load.
func (b *bench) setup(ctx context.Context) error {
	if err := b.check(); err != nil {
		return err
	}
	b.seed = harness.NewScript(seedWindow)
	if err := b.seed.Load(ctx, b.Admin); err != nil {
		return err
	}
	var err error
	if b.captured, err = capture(ctx, b.Env, b.limits()); err != nil {
		return err
	}
	if b.variants, err = b.newVariants(); err != nil {
		return err
	}
	warm := harness.Bounds{Workers: b.Workers, Duration: b.Duration, MaxOps: warmupCalls * int64(b.Workers)}
	for _, v := range b.variants {
		if _, err := harness.Drive(ctx, warm, v.call); err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		v.resetCounts()
	}
	return nil
}
