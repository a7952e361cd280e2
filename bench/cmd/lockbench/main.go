// Lockbench measures the slotlimit lock package against a real Redis,
// beside a bare SET NX PX lock, the classic scripts and two peer libraries
// in the same run, and prints a markdown report of the figures and of the
// targets they are held to.
//
// It runs, in one process on one pool of connections:
//
//   - lock and unlock pairs on -workers goroutines (64), each worker on a
//     key of its own so that every lock is obtained, for each of: a bare
//     SET NX PX with a compare-and-delete script, the classic two scripts,
//     github.com/bsm/redislock, github.com/go-redsync/redsync/v4 and
//     lock.Mutex, and two bounds of the fenced pair, each released by the
//     compare-and-delete script: a fence by MULTI (SET NX GET PX and TIME
//     in one MULTI/EXEC) and the lock's TryLock, which sends that MULTI;
//     in -rounds rounds (3) that the variants take in turns, each
//     variant's Redis time summed over all of its top-level commands,
//     checked against those its client sent;
//   - the Redis time of one call alone in its phase: the bare SET and
//     compare-and-delete, the classic two scripts, the fence by MULTI, the
//     lock's TryLock (MULTI and EXEC) and its Unlock (unlock.lua), with
//     the commands each script or EXEC runs and their time;
//   - allocations per call, against the go-redis calls a bare lock makes.
//
// Without -redis it starts its own redis-server on a free loopback port,
// which needs redis-server on PATH, and stops it when done. From bench/:
//
//	go run ./cmd/lockbench
//	go run ./cmd/lockbench -o ../lock/BENCHMARKS.md
//
// It resets the server's statistics (CONFIG RESETSTAT) before each phase,
// so point it only at a Redis of its own. Its keys begin with "lockbench:"
// and a random tag, and it deletes them when done.
package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

const (
	defaultAllocRuns = 1000 // how many calls testing.AllocsPerRun averages over
	warmupPairs      = 4    // pairs per worker of each variant before the load
)

// A bench is the lock's suite: what every scenario shares, and the figures
// they keep for the report.
type bench struct {
	*harness.Env
	allocRuns int
	scripts   scripts
	pairers   []harness.Pairer // the variants, the bare lock first
	results
}

// results are every figure of one run.
type results struct {
	pairs  []harness.PairResult
	costs  []callCost
	allocs []allocRow
}

func main() {
	b := &bench{allocRuns: defaultAllocRuns}
	flag.IntVar(&b.allocRuns, "alloc-runs", b.allocRuns, "calls each allocation figure averages over")
	harness.Main("lockbench", b)
}

// Steps implements harness.Suite.
func (b *bench) Steps(env *harness.Env) []harness.Step {
	b.Env = env
	return []harness.Step{
		{Name: "setup", Run: b.setup},
		{Name: "lock and unlock pairs", Run: func(ctx context.Context) (err error) {
			b.pairs, err = b.RunPairs(ctx, b.pairers, b.Workers)
			return
		}},
		{Name: "Redis time per call", Run: func(ctx context.Context) (err error) { b.costs, err = b.callCosts(ctx); return }},
		{Name: "allocations", Run: func(ctx context.Context) (err error) { b.allocs, err = b.allocations(ctx); return }},
	}
}

// setup loads the scripts the benchmark runs by EVALSHA, makes the
// variants, and runs a few pairs of each on every worker, unmeasured, so
// that every library has its scripts in the server's cache and the pool
// its connections before the load.
func (b *bench) setup(ctx context.Context) error {
	if b.allocRuns < 1 {
		return fmt.Errorf("-alloc-runs %d: must be at least 1", b.allocRuns)
	}
	b.scripts = scripts{
		cad:        harness.NewScript(compareAndDelete),
		seedLock:   harness.NewScript(seedLock),
		seedUnlock: harness.NewScript(seedUnlock),
	}
	for _, s := range []harness.Script{b.scripts.cad, b.scripts.seedLock, b.scripts.seedUnlock} {
		if err := s.Load(ctx, b.Admin); err != nil {
			return err
		}
	}
	var err error
	if b.pairers, err = b.variants(); err != nil {
		return err
	}
	warm := harness.Bounds{Workers: b.Workers, Duration: b.Duration, MaxOps: warmupPairs * int64(b.Workers)}
	for _, p := range b.pairers {
		_, err := harness.Drive(ctx, warm, func(ctx context.Context, w int) error {
			if err := p.Acquire(ctx, w); err != nil {
				return err
			}
			return p.Release(ctx, w)
		})
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
	}
	return nil
}
