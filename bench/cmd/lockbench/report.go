package main

import (
	"fmt"
	"strings"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
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

// signed formats a difference as "+0.47" or "-0.03", and one that rounds
// to zero as "0.00".
func signed(x float64) string {
	if s := fmt.Sprintf("%+.2f", x); s != "+0.00" && s != "-0.00" {
		return s
	}
	return "0.00"
}

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
	try, unlock := r.cost(callTryLock).usecPerCall(), r.cost(callUnlock).usecPerCall()
	set, cad := r.cost(callBareSet).usecPerCall(), r.cost(callBareCAD).usecPerCall()
	lkRate, rlRate := lk.PairsPerSecond(), rl.PairsPerSecond()
	return []harness.Target{{
		Name: "Redis µs per TryLock+Unlock pair / bare pair",
		Measured: fmt.Sprintf("%.2f vs %.2f µs (each call alone: TryLock %.2f + Unlock %.2f vs SET %.2f + compare-and-delete %.2f µs, %s)",
			lkUsec, bareUsec, try, unlock, set, cad, times(harness.Div(try+unlock, set+cad))),
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

// bounds returns the paragraph under the targets that says what the
// bounding variants measured: the fence by MULTI, and the lock's TryLock
// with the bare unlock.
func (b *bench) bounds() string {
	r := b.results
	bare := r.pair(nameBare).ServerUsecPerPair()
	multi := r.pair(nameMultiFence).ServerUsecPerPair()
	tryCAD := r.pair(nameTryLockCAD).ServerUsecPerPair()
	lk := r.pair(nameLock).ServerUsecPerPair()
	alone := func(call string) string { return f2(r.cost(call).usecPerCall()) }
	return fmt.Sprintf("Bounds, not targets, from the same run (rows of the next two tables). "+
		"*Fence by MULTI, no raise* (`SET NX GET PX` and `TIME` in one MULTI/EXEC, one round trip, the fence being TIME in µs with no side key and no raise, released by the bare compare-and-delete) is the cheapest fenced pair measured: %s µs per pair, %s the bare pair's %s µs (target for the lock ≤ %.1f×), so a server-clock fence added %s µs per pair. "+
		"*TryLock + bare compare-and-delete* (the lock's TryLock, which sends the same MULTI, released by the bare compare-and-delete) took %s µs per pair, %s the bare pair and %s µs on the fence by MULTI's pair: of the lock's %s µs on the bare pair, %s µs came with TryLock's MULTI/EXEC in place of SET NX PX and %s µs with unlock.lua in place of the compare-and-delete. "+
		"Each call alone (Redis time per call), in µs: SET NX PX %s, the MULTI fence %s, TryLock %s and %s (its two kinds); the compare-and-delete %s after SET, %s after the MULTI fence and %s after TryLock; unlock.lua %s.",
		f2(multi), times(harness.Div(multi, bare)), f2(bare), targetPairCost, signed(multi-bare),
		f2(tryCAD), times(harness.Div(tryCAD, bare)), signed(tryCAD-multi), signed(lk-bare), signed(tryCAD-bare), signed(lk-tryCAD),
		alone(callBareSet), alone(callMultiFence), alone(callTryLockCAD), alone(callTryLock),
		alone(callBareCAD), alone(callMultiCAD), alone(callLockCAD), alone(callUnlock))
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

	targets := harness.TargetTable("Targets",
		"Each figure against a baseline measured in this run. Redis µs per pair is the server time (INFO commandstats usec) of every top-level command of the pair, over the pair phases: SET and EVALSHA for the bare lock; MULTI and EXEC (whose time includes the SET and TIME queued in it) for the lock's TryLock, and EVALSHA for its Unlock. The figures in brackets are each call alone in its phase (see Redis time per call). Pairs/s are the pair phases'.",
		b.targets())
	targets.Outro = b.bounds()
	rep.Add(targets)

	t := harness.Table{
		Title: fmt.Sprintf("Lock and unlock: %d workers, each on a key of its own", b.Workers),
		Intro: "Every lock is obtained, so attempts/s equal pairs/s. The bare lock, the classic scripts and the fence by MULTI make a new random token for each lock, as every other variant does. Latencies are of each call as the caller sees it. Redis µs per pair is the server time of the top-level commands named, those the scripts run being part of their script's time, and the SET and TIME queued in a MULTI part of its EXEC's (INFO commandstats counts them on their own lines too); commands sent and round trips count the load client's, a MULTI ... EXEC being one round trip; commands Redis ran count those inside scripts and EXEC too. Each variant's top-level commands are checked against those its client sent in every phase. The fence by MULTI and TryLock + bare compare-and-delete bound the lock's pair (see under Targets).",
		Head:  []string{"variant", "pairs/s", "lock p50 / p99 (µs)", "unlock p50 / p99 (µs)", "Redis µs per pair", "Redis µs / bare", "top-level commands", "commands sent per pair", "round trips per pair", "commands Redis ran per pair"},
	}
	bareUsec := r.pair(nameBare).ServerUsecPerPair()
	for _, p := range r.pairs {
		t.Add(p.Name, count(p.PairsPerSecond()), p50p99(p.Acquire), p50p99(p.Release),
			f2(p.ServerUsecPerPair()), times(harness.Div(p.ServerUsecPerPair(), bareUsec)), strings.Join(p.Commands, " + "),
			f2(p.CommandsPerPair()), f2(harness.Ratio(p.Trips, p.Ops)), f2(harness.Ratio(p.Server.Commands(), p.Ops)))
	}
	rep.Add(t)

	t = harness.Table{
		Title: "Redis time per call",
		Intro: fmt.Sprintf("INFO commandstats sums every script under `evalsha`, so each call runs alone in its phase, %d workers, after CONFIG RESETSTAT. In each round, each kind of lock takes up to %s free keys (%d per worker), one after another, and its unlocks then free the same keys in the same order; the kinds take turns, and every round uses the same keys again, as the pair phases do. The lock's TryLock runs in two kinds, one freed by the compare-and-delete, one by the lock's Unlock. A call's time is that of its top-level commands: EVALSHA for a script, MULTI and EXEC for a TryLock or the fence by MULTI. A script's time includes the commands it runs, and an EXEC's the commands queued since MULTI, which INFO commandstats also counts on their own lines: their time is shown apart, and the rest is the script's own (the Lua, its arguments, the call), or MULTI's and EXEC's.", b.Workers, count(float64(b.Workers*keysPerWorker)), keysPerWorker),
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
