package main

import (
	"fmt"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// Target figures that no flag changes.
const (
	targetOverhead = 0.95 // Allow calls/s, over the bare EVALSHA of its script
	targetSeedCost = 1.5  // Redis µs per Allow, over the classic script's
	targetPeerCost = 1.0  // GCRA's Redis µs per Allow, over redis_rate's
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

// targets returns the rows of the targets table, each a ratio to a
// baseline of the same run.
func (b *bench) targets() []harness.Target {
	r := b.results
	var out []harness.Target
	for _, x := range []struct{ algorithm, lib, bare string }{
		{"FixedWindow", nameWindow, nameBareWindow},
		{"GCRA", nameGCRA, nameBareGCRA},
	} {
		lib, bare := r.call(x.lib).CallsPerSecond(), r.call(x.bare).CallsPerSecond()
		out = append(out, harness.Target{
			Name:     fmt.Sprintf("library overhead, %s: Allow calls/s / bare EVALSHA of its script, %d workers", x.algorithm, b.Workers),
			Measured: fmt.Sprintf("%s vs %s calls/s", count(lib), count(bare)),
			Target:   "≥ 0.95×",
			Ratio:    times(harness.Div(lib, bare)),
			Pass:     bare > 0 && lib >= targetOverhead*bare,
		})
	}
	seed := r.call(nameSeed).ServerUsecPerCall()
	for _, x := range []struct{ algorithm, lib string }{
		{"FixedWindow", nameWindow},
		{"GCRA", nameGCRA},
	} {
		lib := r.call(x.lib).ServerUsecPerCall()
		out = append(out, harness.Target{
			Name:     fmt.Sprintf("Redis µs per Allow, %s / classic script", x.algorithm),
			Measured: fmt.Sprintf("%.2f vs %.2f µs", lib, seed),
			Target:   "≤ 1.5×",
			Ratio:    times(harness.Div(lib, seed)),
			Pass:     seed > 0 && lib <= targetSeedCost*seed,
		})
	}
	gcra, peer := r.call(nameGCRA).ServerUsecPerCall(), r.call(nameRedisRate).ServerUsecPerCall()
	out = append(out, harness.Target{
		Name:     "Redis µs per Allow, GCRA / redis_rate's Allow",
		Measured: fmt.Sprintf("%.2f vs %.2f µs (redis_rate %s the classic)", gcra, peer, times(harness.Div(peer, seed))),
		Target:   "≤ 1.0×",
		Ratio:    times(harness.Div(gcra, peer)),
		Pass:     peer > 0 && gcra <= targetPeerCost*peer,
	})
	return out
}

// mix describes the load's keys and outcomes, the same for every
// variant.
func (b *bench) mix() string {
	allowed := min(b.rate, b.callsPerKey)
	refill := "No key refills or starts a new window while its calls last, not even one whose calls a phase's end splits between two rounds."
	// The longest a worker can leave a key: from a phase's end to its
	// variant's next phase, the other variants' phases between.
	gap := time.Duration(len(b.variants)) * (b.Duration + harness.Grace)
	if every := window / time.Duration(b.rate); every <= gap {
		refill = fmt.Sprintf("A GCRA key refills one event every %v, which a phase's end splitting a key's calls between two rounds can give it.", every)
	}
	return fmt.Sprintf("each worker calls each of its keys %d times in a row, then moves to a key never used before; every limit is %d per hour (GCRA's burst %d), so of each key's %d calls the first finds no key and starts its window or its GCRA time, the first %d are allowed and the other %d refused: %s allowed, one call in %d on a new key, whatever the machine's speed. %s",
		b.callsPerKey, b.rate, b.rate, b.callsPerKey, allowed, b.callsPerKey-allowed,
		percent(float64(allowed)/float64(b.callsPerKey)), b.callsPerKey, refill)
}

func percent(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// Report implements harness.Suite.
func (b *bench) Report(rep *harness.Report) {
	r := b.results
	rep.Title = "slotlimit ratelimit benchmarks"
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("Run: %s; each phase %v and at most %s calls; each variant's phases in %d rounds, the variants taking turns; %d workers on one go-redis client with a pool of %d connections for every variant.",
			rep.Machine.Date, b.Duration, count(float64(b.MaxOps)), b.Rounds, b.Workers, b.Pool),
		fmt.Sprintf("Peer: %s %s, on %s %s.", modRedisRate, harness.ModuleVersion(modRedisRate), modGoRedis, harness.ModuleVersion(modGoRedis)),
		"Keys: "+b.mix(),
		fmt.Sprintf("These figures are ratios within one run on a shared, noisy %d-core machine where Redis, the load and its goroutines share the cores. Absolute numbers move from run to run; compare rows of the same run, which is what the targets do.", rep.Machine.CPUs),
	)

	rep.Add(harness.TargetTable("Targets",
		"Each figure against a baseline measured in this run, on the same keys and outcomes (see Keys above). Calls/s are the Allow phases'. Redis µs per call is the server time (INFO commandstats usec) of the variant's top-level command, EVALSHA, the only one any variant sends, over its phases; it includes the commands its script runs. The bare EVALSHA variants send the library's own scripts with the arguments the library is seen to send, and no library code around them.",
		b.targets()))

	t := harness.Table{
		Title: fmt.Sprintf("Allow: %d workers, many keys", b.Workers),
		Intro: "Latencies are of each call as the caller sees it. Redis µs per call is EVALSHA's time over the calls; the commands a script ran are counted on their own lines by INFO commandstats too, so their time is shown apart, and the rest is the script's own (the Lua, its arguments, the call). Allowed is counted from each reply; the classic script counts the calls it refuses too, and the others count only what they allow. Each variant's top-level commands are checked against those its client sent in every phase.",
		Head:  []string{"variant", "calls/s", "p50 / p99 / p99.9 (µs)", "allowed", "Redis µs per call", "Redis µs / classic", "commands the script ran, per call", "µs in those commands", "µs besides them", "commands sent per call"},
	}
	seed := r.call(nameSeed).ServerUsecPerCall()
	for i, c := range r.calls {
		usec := c.ServerUsecPerCall()
		inner := harness.Ratio(c.Server.NestedUsec(c.Commands...), c.Ops)
		allowed := ""
		if i < len(b.variants) && b.variants[i].name == c.Name {
			allowed = percent(harness.Ratio(b.variants[i].allowed(), c.Ops))
		}
		t.Add(c.Name, count(c.CallsPerSecond()), harness.Percentiles(c.Latency), allowed,
			f2(usec), times(harness.Div(usec, seed)), c.Server.Nested(c.Ops, c.Commands...), f2(inner), f2(usec-inner), f2(c.CommandsPerCall()))
	}
	rep.Add(t)

	t = harness.Table{
		Title: "Allocations per call",
		Intro: fmt.Sprintf("testing.AllocsPerRun(%d) in this process, on the same warmed client, each call on a new key of its own, so every call is allowed.", b.allocRuns),
		Head:  []string{"variant", "allocs/op", "over"},
	}
	for _, a := range r.allocs {
		over := ""
		if a.against != "" {
			over = r.allocRatio(a) + " the bare EVALSHA of its script"
		}
		t.Add(a.name, f2(a.allocs), over)
	}
	rep.Add(t)
}
