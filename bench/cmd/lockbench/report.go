package main

import (
	"fmt"
	"strings"

	"github.com/slotlimit/slotlimit/bench/harness"
)

// Target figures that no flag changes.
const (
	targetPairCost = 1.3 // Redis µs of a TryLock+Unlock pair, over the bare pair's
	targetPairRate = 1.0 // pairs/s, over redislock's
)

// Shorthands for the report's cells.
var (
	count = harness.Count
	times = harness.Times
)

func f2(x float64) string { return fmt.Sprintf("%.2f", x) }

// p50p99 formats t's p50 and p99 in µs, as "310 / 1,204".
func p50p99(t harness.Timings) string {
	q := t.Quantiles(0.50, 0.99)
	return harness.Micros(q[0]) + " / " + harness.Micros(q[1])
}

func (r results) pair(name string) harness.PairResult {
	for _, p := range r.pairs {
		if p.Name == name {
			return p
		}
	}
	return harness.PairResult{}
}

func (r results) cost(call string) callCost {
	for _, c := range r.costs {
		if c.call == call {
			return c
		}
	}
	return callCost{}
}

// targets returns the rows of the targets table, each a ratio to a
// baseline of the same run.
func (b *bench) targets() []harness.Target {
	r := b.results
	bare, lk, rl := r.pair(nameBare), r.pair(nameLock), r.pair(nameRedislock)

	lkUsec, bareUsec := lk.ServerUsecPerPair(), bare.ServerUsecPerPair()
	obtain, unlock := r.cost(callObtain).usecPerCall(), r.cost(callUnlock).usecPerCall()
	set, cad := r.cost(callBareSet).usecPerCall(), r.cost(callBareCAD).usecPerCall()
	lkRate, rlRate := lk.PairsPerSecond(), rl.PairsPerSecond()
	return []harness.Target{{
		Name: "Redis µs per TryLock+Unlock pair / bare pair",
		Measured: fmt.Sprintf("%.2f vs %.2f µs (each call alone: obtain %.2f + unlock %.2f vs SET %.2f + compare-and-delete %.2f µs, %s)",
			lkUsec, bareUsec, obtain, unlock, set, cad, times(harness.Div(obtain+unlock, set+cad))),
		Target: "≤ 1.3×",
		Ratio:  times(harness.Div(lkUsec, bareUsec)),
		Pass:   bareUsec > 0 && lkUsec <= targetPairCost*bareUsec,
	}, {
		Name:     fmt.Sprintf("pairs/s / redislock's pairs/s, %d workers", b.Workers),
		Measured: fmt.Sprintf("%s vs %s pairs/s", count(lkRate), count(rlRate)),
		Target:   "≥ 1.0×",
		Ratio:    times(harness.Div(lkRate, rlRate)),
		Pass:     rlRate > 0 && lkRate >= targetPairRate*rlRate,
	}}
}

// Report implements harness.Suite.
func (b *bench) Report(rep *harness.Report) {
	r := b.results
	rep.Title = "slotlimit lock benchmarks"
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("Run: %s; each phase %v and at most %s operations; the pair phases %d rounds each, the variants taking turns; one go-redis client with a pool of %d connections for every variant; leases of %v.",
			rep.Machine.Date, b.Duration, count(float64(b.MaxOps)), b.Rounds, b.Pool, lockTTL),
		fmt.Sprintf("Peers: %s %s, %s %s, on %s %s.",
			modRedislock, harness.ModuleVersion(modRedislock), modRedsync, harness.ModuleVersion(modRedsync),
			"github.com/redis/go-redis/v9", harness.ModuleVersion("github.com/redis/go-redis/v9")),
		fmt.Sprintf("These figures are ratios within one run on a shared, noisy %d-core machine where Redis, the load and its goroutines share the cores. Absolute numbers move from run to run; compare rows of the same run, which is what the targets do.", rep.Machine.CPUs),
	)

	rep.Add(harness.TargetTable("Targets",
		"Each figure against a baseline measured in this run. Redis µs per pair is the server time (INFO commandstats usec) of every top-level command of the pair, over the pair phases: SET and EVALSHA for the bare lock, EVALSHA for the lock. The figures in brackets are each call alone in its phase (see Redis time per call). Pairs/s are the pair phases'.",
		b.targets()))

	t := harness.Table{
		Title: fmt.Sprintf("Lock and unlock: %d workers, each on a key of its own", b.Workers),
		Intro: "Every lock is obtained, so attempts/s equal pairs/s. The bare lock and the seed's scripts make a new random token for each lock, as every other variant does. Latencies are of each call as the caller sees it. Redis µs per pair is the server time of the top-level commands named, those the scripts run being part of their script's time; commands sent count the load client's; commands Redis ran count those inside scripts too.",
		Head:  []string{"variant", "pairs/s", "lock p50 / p99 (µs)", "unlock p50 / p99 (µs)", "Redis µs per pair", "Redis µs / bare", "top-level commands", "commands sent per pair", "commands Redis ran per pair"},
	}
	bareUsec := r.pair(nameBare).ServerUsecPerPair()
	for _, p := range r.pairs {
		t.Add(p.Name, count(p.PairsPerSecond()), p50p99(p.Acquire), p50p99(p.Release),
			f2(p.ServerUsecPerPair()), times(harness.Div(p.ServerUsecPerPair(), bareUsec)), strings.Join(p.Commands, " + "),
			f2(p.CommandsPerPair()), f2(harness.Ratio(p.Server.Commands(), p.Ops)))
	}
	rep.Add(t)

	t = harness.Table{
		Title: "Redis time per call",
		Intro: fmt.Sprintf("INFO commandstats sums every script under `evalsha`, so each call runs alone in its phase, %d workers, after CONFIG RESETSTAT. In each round, each kind of lock takes up to %s free keys (%d per worker), one after another, and its unlocks then free the same keys in the same order; the kinds take turns, and every round uses the same keys again (so, after the first, the lock's obtain finds the last fence it left there, as in the pair phases). A script's time includes the commands it runs, which INFO commandstats also counts on their own lines: their time is shown apart, and the rest is the script's own (the Lua, its arguments, the call).", b.Workers, count(float64(b.Workers*keysPerWorker)), keysPerWorker),
		Head:  []string{"call", "load", "calls/s", "µs per call", "commands it ran, per call", "µs in those commands", "µs besides them"},
	}
	for _, c := range r.costs {
		inner := c.innerUsecPerCall()
		t.Add(c.call, c.load, count(c.Rate(c.calls())), f2(c.usecPerCall()), c.inner(), f2(inner), f2(c.usecPerCall()-inner))
	}
	rep.Add(t)

	t = harness.Table{
		Title: "Allocations per call",
		Intro: fmt.Sprintf("testing.AllocsPerRun(%d) in this process, on the same warmed client. TryLock, SetNX, Unlock and the compare-and-delete each run on a key of their own, so every lock is obtained; the pairs run on worker 0's keys of the pair phases.", b.allocRuns),
		Head:  []string{"call", "allocs/op", "over"},
	}
	for _, a := range r.allocs {
		over := ""
		if a.against != "" {
			over = r.allocRatio(a) + " " + a.label
		}
		t.Add(a.call, f2(a.allocs), over)
	}
	rep.Add(t)
}
