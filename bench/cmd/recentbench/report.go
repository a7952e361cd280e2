package main

import (
	"fmt"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// Target figures that no flag changes.
const (
	targetSeedCost   = 1.5 // Redis µs per Add, over the classic script's
	targetSeedMemory = 1.5 // bytes per full list, over the classic
)

// Shorthands for the report's cells.
var (
	count = harness.Count
	times = harness.Times
)

func f2(x float64) string { return fmt.Sprintf("%.2f", x) }

func (r results) call(name string) harness.CallResult {
	for _, c := range r.calls {
		if c.Name == name {
			return c
		}
	}
	return harness.CallResult{}
}

func (r results) mem(name string) memoryRow {
	for _, m := range r.memory {
		if m.name == name {
			return m
		}
	}
	return memoryRow{}
}

// targets returns the rows of the targets table, each a ratio to the
// classic figure of the same run.
func (b *bench) targets() []harness.Target {
	r := b.results
	lib, seed := r.call(nameList).ServerUsecPerCall(), r.call(nameSeed).ServerUsecPerCall()
	libMem, seedMem := r.mem(nameList).perList(), r.mem(nameSeed).perList()
	return []harness.Target{
		{
			Name:     fmt.Sprintf("Redis µs per Add / classic script, %d workers, many keys", b.Workers),
			Measured: fmt.Sprintf("%.2f vs %.2f µs", lib, seed),
			Target:   "≤ 1.5×",
			Ratio:    times(harness.Div(lib, seed)),
			Pass:     seed > 0 && lib <= targetSeedCost*seed,
		},
		{
			Name:     fmt.Sprintf("memory per list of %d items / classic list", b.max),
			Measured: fmt.Sprintf("%s vs %s B", count(libMem), count(seedMem)),
			Target:   "≤ 1.5×",
			Ratio:    times(harness.Div(libMem, seedMem)),
			Pass:     seedMem > 0 && libMem <= targetSeedMemory*seedMem,
		},
	}
}

// mix describes the load's lists and values, the same for every variant.
func (b *bench) mix() string {
	lists := b.Workers * b.users
	return fmt.Sprintf("each of the %d workers owns %d lists of its own, one per user (%s lists per variant), each of at most %d items. Before the load, each worker fills each of its lists with %d values, one per call, through the variant's own Add; then each call adds a value never added before (18 bytes, as `item:007:000001234`) to the worker's next list in turn, so every Add of every variant puts one item in front and drops the oldest, whatever the machine's speed. The library's List has Max %d and neither TTL nor MaxAge, as the classic script has neither; the classic script is scored with the client's clock in whole seconds, as the classic script does. After the load every list holds exactly %d items; the run checks it.",
		b.Workers, b.users, count(float64(lists)), b.max, b.max, b.max, b.max)
}

// Report implements harness.Suite.
func (b *bench) Report(rep *harness.Report) {
	r := b.results
	rep.Title = "slotlimit recent benchmarks"
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("Run: %s; each phase %v and at most %s calls; each variant's phases in %d rounds, the variants taking turns; %d workers on one go-redis client with a pool of %d connections for every variant.",
			rep.Machine.Date, b.Duration, count(float64(b.MaxOps)), b.Rounds, b.Workers, b.Pool),
		"Lists: "+b.mix(),
		fmt.Sprintf("These figures are ratios within one run on a shared, noisy %d-core machine where Redis, the load and its goroutines share the cores. Absolute numbers move from run to run; compare rows of the same run, which is what the targets do.", rep.Machine.CPUs),
	)

	rep.Add(harness.TargetTable("Targets",
		"Each figure against the classic, measured in this run, on the same lists and values (see Lists above). Redis µs per call is the server time (INFO commandstats usec) of the variant's top-level command, EVALSHA for both, over its phases; it includes the commands its script runs. Memory is MEMORY USAGE with SAMPLES 0 of every list just filled, each list holding the same values in every variant, over the lists.",
		b.targets()))

	t := harness.Table{
		Title: fmt.Sprintf("Add: %d workers, many keys", b.Workers),
		Intro: "Latencies are of each call as the caller sees it. Redis µs per call is the time of the variant's top-level commands over its calls: EVALSHA for the scripts, LPUSH and LTRIM for the pipeline, which is one round trip of two commands. The commands a script ran are counted on their own lines by INFO commandstats too, so their time is shown apart, and the rest is the script's own (the Lua, its arguments, the call). Each variant's top-level commands are checked against those its client sent in every phase.",
		Head:  []string{"variant", "calls/s", "p50 / p99 / p99.9 (µs)", "top-level commands", "Redis µs per call", "Redis µs / classic", "commands the script ran, per call", "µs in those commands", "µs besides them", "commands sent per call"},
	}
	seed := r.call(nameSeed).ServerUsecPerCall()
	for _, c := range r.calls {
		usec := c.ServerUsecPerCall()
		inner := harness.Ratio(c.Server.NestedUsec(c.Commands...), c.Ops)
		top := ""
		for i, name := range c.Commands {
			if i > 0 {
				top += ", "
			}
			top += name
		}
		t.Add(c.Name, count(c.CallsPerSecond()), harness.Percentiles(c.Latency), top,
			f2(usec), times(harness.Div(usec, seed)), c.Server.Nested(c.Ops, c.Commands...), f2(inner), f2(usec-inner), f2(c.CommandsPerCall()))
	}
	rep.Add(t)

	t = harness.Table{
		Title: fmt.Sprintf("Memory per list of %d items", b.max),
		Intro: fmt.Sprintf("MEMORY USAGE with SAMPLES 0 of every list of each variant, just filled with its %d values, one per call; the same values in the same lists for every variant. The library's scores are times to a fraction of a millisecond, which a listpack keeps as text, where the classic whole seconds are kept as integers; a Redis list keeps no score at all.", b.max),
		Head:  []string{"variant", "lists", "encoding", "bytes per list", "bytes per item", "/ classic"},
	}
	seedMem := r.mem(nameSeed).perList()
	for _, m := range r.memory {
		per := m.perList()
		t.Add(m.name, count(float64(m.lists)), m.encoding, count(per), f2(per/float64(b.max)), times(harness.Div(per, seedMem)))
	}
	rep.Add(t)
}
