// Qbench measures the slotlimit delayqueue package against a real Redis,
// beside the classic sorted-set scheme and github.com/hibiken/asynq in the
// same run, and prints a markdown report of the figures and of the
// targets they are held to.
//
// It runs, in one process on one pool of connections:
//
//   - push, poll and ack triples, -producers goroutines (8) pushing
//     messages due at once and -consumers goroutines (8) taking them, no
//     more than -backlog (256) pushed and not yet taken, for each of: the
//     package's Push, Poll and Ack; the classic scheme (ZADD scored by the
//     due time in whole seconds, and a consumer that runs the classic poll
//     script, then sleeps 10 ms, as the classic does); and asynq's
//     Client.Enqueue with its Server of -consumers workers; in -rounds
//     rounds (3) that the variants take in turns, each phase bounded by
//     -duration and -max-ops, then drained; triples/s and the Redis time
//     per message of every top-level command the variant's client sent;
//   - due-to-delivery latency: -tasks tasks (5,000), each due -due (100
//     ms) after its push began, pushed by -producers goroutines as fast
//     as they go, taken by -consumers workers (8): the package's Push and
//     Run, the classic scheme, and asynq with its defaults and with its
//     forwarder (Config.DelayedTaskCheckInterval) at -due.
//
// Without -redis it starts its own redis-server on a free loopback port,
// which needs redis-server on PATH, and stops it when done. From bench/:
//
//	go run ./cmd/qbench
//	go run ./cmd/qbench -o ../delayqueue/BENCHMARKS.md
//
// It resets the server's statistics (CONFIG RESETSTAT) before each phase,
// so point it only at a Redis of its own. Its keys begin with "qbench:"
// and a random tag (asynq's with "asynq:{" before them), and it deletes
// them when done.
package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// settings are qbench's own flags, beside the harness's.
type settings struct {
	consumers, producers int
	backlog              int           // most messages pushed and not yet taken, in the triple phases
	tasks                int           // tasks of each latency phase
	due                  time.Duration // each task's delay, in the latency phases
	latencyTimeout       time.Duration // bound of each latency phase
}

func defaultSettings() settings {
	return settings{consumers: 8, producers: 8, backlog: 256, tasks: 5000, due: 100 * time.Millisecond, latencyTimeout: 30 * time.Second}
}

func (s *settings) registerFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.consumers, "consumers", s.consumers, "consumers, or workers, of every variant")
	fs.IntVar(&s.producers, "producers", s.producers, "goroutines that push")
	fs.IntVar(&s.backlog, "backlog", s.backlog, "most messages pushed and not yet taken in the triple phases")
	fs.IntVar(&s.tasks, "tasks", s.tasks, "tasks of each latency phase")
	fs.DurationVar(&s.due, "due", s.due, "delay of each task in the latency phases, and asynq's second forwarder interval")
	fs.DurationVar(&s.latencyTimeout, "latency-timeout", s.latencyTimeout, "bound of each latency phase")
}

func (s settings) check() error {
	switch {
	case s.consumers < 1 || s.producers < 1 || s.backlog < 1 || s.tasks < 1:
		return fmt.Errorf("-consumers, -producers, -backlog and -tasks must be at least 1")
	case s.due <= 0 || s.latencyTimeout <= 0:
		return fmt.Errorf("-due and -latency-timeout must be positive")
	}
	return nil
}

// A bench is the delay queue's suite: what every scenario shares, and the
// figures they keep for the report.
type bench struct {
	*harness.Env
	settings
	seedPoll harness.Script
	results
}

// results are every figure of one run.
type results struct {
	triples   []tripleResult
	latencies []latencyResult
}

func main() {
	b := &bench{settings: defaultSettings()}
	b.registerFlags(flag.CommandLine)
	harness.Main("qbench", b)
}

// Steps implements harness.Suite.
func (b *bench) Steps(env *harness.Env) []harness.Step {
	b.Env = env
	return []harness.Step{
		{Name: "setup", Run: b.setup},
		{Name: "push, poll and ack", Run: func(ctx context.Context) (err error) { b.triples, err = b.runTriples(ctx); return }},
		{Name: "due-to-delivery latency", Run: func(ctx context.Context) (err error) { b.latencies, err = b.runLatencies(ctx); return }},
		{Name: "clean-up", Run: b.cleanup},
	}
}

// setup loads the classic script and runs a few triples of each variant,
// unmeasured, so that every script is in the server's cache and the pool
// has its connections before the load.
func (b *bench) setup(ctx context.Context) error {
	if err := b.check(); err != nil {
		return err
	}
	b.seedPoll = harness.NewScript(seedPoll)
	if err := b.seedPoll.Load(ctx, b.Admin); err != nil {
		return err
	}
	warm := harness.Bounds{Workers: b.producers, Duration: b.Duration, MaxOps: int64(4 * b.consumers)}
	for _, v := range b.tripleVariants() {
		if _, err := b.triplePhase(ctx, v, warm, false); err != nil {
			return fmt.Errorf("warm-up of %s: %w", v.name, err)
		}
	}
	return nil
}
