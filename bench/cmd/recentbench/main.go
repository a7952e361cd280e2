// Recentbench measures the slotlimit recent package against a real Redis,
// beside the classic sorted-set script and a pipelined LPUSH and LTRIM in
// the same run, and prints a markdown report of the figures and of the
// targets they are held to.
//
// It runs, in one process on one pool of connections:
//
//   - Add calls on -workers goroutines (64), for each of: List.Add with
//     one value per call; the classic script, verbatim, by EVALSHA, scored
//     with the client's clock in whole seconds; and LPUSH and LTRIM in
//     one pipeline; in -rounds rounds (3) that the variants take in
//     turns, each variant's Redis time summed over its top-level commands
//     (EVALSHA; LPUSH and LTRIM), checked against those its client sent;
//   - memory per list of -max items (50), by MEMORY USAGE with SAMPLES 0,
//     over every list of each variant, all holding the same values.
//
// Each worker owns -users lists (16), one per user, each kept to -max
// items. Before the load, each worker fills each of its lists with -max
// values, one per call, through the variant's own Add; then every call
// adds a value never added before to the next of its lists in turn, so
// every Add of every variant puts one item in front and drops the oldest,
// whatever the machine's speed.
//
// Without -redis it starts its own redis-server on a free loopback port,
// which needs redis-server on PATH, and stops it when done. From bench/:
//
//	go run ./cmd/recentbench
//	go run ./cmd/recentbench -o ../recent/BENCHMARKS.md
//
// It resets the server's statistics (CONFIG RESETSTAT) before each phase,
// so point it only at a Redis of its own. Its keys begin with
// "recentbench:" and a random tag, and it deletes them when done.
package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// settings are recentbench's own flags, beside the harness's.
type settings struct {
	max   int64 // items each list keeps, every variant's
	users int   // lists each worker owns
}

func defaultSettings() settings {
	return settings{max: 50, users: 16}
}

func (s *settings) registerFlags(fs *flag.FlagSet) {
	fs.Int64Var(&s.max, "max", s.max, "items each list keeps, for every variant")
	fs.IntVar(&s.users, "users", s.users, "lists each worker owns, one per user, added to in turn")
}

// check returns an error naming the first setting out of range.
func (s settings) check() error {
	switch {
	case s.max < 1:
		return fmt.Errorf("-max %d: must be at least 1", s.max)
	case s.users < 1:
		return fmt.Errorf("-users %d: must be at least 1", s.users)
	}
	return nil
}

// A bench is the recent list's suite: what every scenario shares, and the
// figures they keep for the report.
type bench struct {
	settings
	*harness.Env
	seed     harness.Script
	variants []*variant // in the order of the report
	results
}

// results are every figure of one run.
type results struct {
	calls  []harness.CallResult
	memory []memoryRow
}

func main() {
	b := &bench{settings: defaultSettings()}
	b.registerFlags(flag.CommandLine)
	harness.Main("recentbench", b)
}

// Steps implements harness.Suite.
func (b *bench) Steps(env *harness.Env) []harness.Step {
	b.Env = env
	return []harness.Step{
		{Name: "setup", Run: b.setup},
		{Name: "fill the lists", Run: b.fill},
		{Name: "memory", Run: func(ctx context.Context) (err error) { b.memory, err = b.measureMemory(ctx); return }},
		{Name: "Add calls", Run: func(ctx context.Context) (err error) { b.calls, err = b.RunCalls(ctx, b.callers(), b.Workers); return }},
		{Name: "check the lists", Run: b.checkLists},
	}
}

// setup checks the settings, loads the classic script and makes the
// variants.
func (b *bench) setup(ctx context.Context) error {
	if err := b.check(); err != nil {
		return err
	}
	if b.Workers > 1000 {
		return fmt.Errorf("-workers %d: at most 1000, the width of a value's worker field", b.Workers)
	}
	b.seed = harness.NewScript(seedAdd)
	if err := b.seed.Load(ctx, b.Admin); err != nil {
		return err
	}
	var err error
	b.variants, err = b.newVariants()
	return err
}
