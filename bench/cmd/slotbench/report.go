package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/bench/harness"
)

// results are every figure of one run.
type results struct {
	allocs    []allocRow
	pairs     []pairResult
	costs     []scriptCost
	contended []contended
	many      manyKeys
	mem       memory
	bursts    []burst
}

// Shorthands for the report's cells.
var (
	count = harness.Count
	times = harness.Times
	bytes = harness.Bytes
	ratio = harness.Ratio
)

func f2(x float64) string { return fmt.Sprintf("%.2f", x) }
func f3(x float64) string { return fmt.Sprintf("%.3f", x) }

func (r results) budgets() []harness.Target {
	var out []harness.Target
	raw, lib := r.pair(nameRaw), r.pair(nameLimiter)
	rawRate, libRate := raw.Rate(raw.Ops), lib.Rate(lib.Ops)
	out = append(out, harness.Target{
		Name:     "Library overhead: Limiter pairs/s ≥ 0.95 × bare EVALSHA of its scripts (b)",
		Measured: fmt.Sprintf("%s vs %s pairs/s", count(libRate), count(rawRate)),
		Target:   "≥ 0.95×",
		Ratio:    times(harness.Div(libRate, rawRate)),
		Pass:     libRate >= 0.95*rawRate,
	})

	lease, seed := r.cost(nameLibAcquire, true).usecPerCall(), r.cost(nameSeedAcquire, true).usecPerCall()
	floor := r.cost(nameTwoReads, true).usecPerCall()
	out = append(out, harness.Target{
		Name:     "Server cost: acquire script usec_per_call ≤ 1.5 × the seed's, full key, refusals",
		Measured: fmt.Sprintf("%.2f vs %.2f µs (its two reads alone: %.2f µs, %s)", lease, seed, floor, times(harness.Div(floor, seed))),
		Target:   "≤ 1.5×",
		Ratio:    times(harness.Div(lease, seed)),
		Pass:     lease <= 1.5*seed,
	})

	for _, x := range r.bursts {
		single, batch := x.single.Rate(x.single.Ops*batchSize), x.batch.Rate(x.batch.Ops*batchSize)
		out = append(out, harness.Target{
			Name:     fmt.Sprintf("Batch: TryAcquireBatch+ReleaseBatch of 100 ≥ 5 × 100 single calls, %s", callers(x.callers)),
			Measured: fmt.Sprintf("%s vs %s pairs/s", count(batch), count(single)),
			Target:   "≥ 5×",
			Ratio:    times(harness.Div(batch, single)),
			Pass:     batch >= 5*single,
		})
	}

	evalsha, try := r.alloc(allocEvalSha), r.alloc(allocTryAcquire)
	out = append(out, harness.Target{
		Name:     "Allocations: TryAcquire ≤ go-redis EvalSha + 5",
		Measured: fmt.Sprintf("%.0f vs %.0f allocs/op", try, evalsha),
		Target:   "≤ +5",
		Ratio:    fmt.Sprintf("%+.0f", try-evalsha),
		Pass:     try <= evalsha+5,
	})

	out = append(out, harness.Target{
		Name:     "Memory: one key with 60 holders ≤ 2 KB",
		Measured: bytes(r.mem.full),
		Target:   "≤ 2,048 B",
		Ratio:    times(float64(r.mem.full) / 2048),
		Pass:     r.mem.full <= 2048,
	}, harness.Target{
		Name:     "Memory: an idle key costs 0 bytes (all released; all lapsed, never read again)",
		Measured: fmt.Sprintf("%s; %s %s after the lapse", bytes(r.mem.released), bytes(r.mem.lapsed), r.mem.reclaimed.Round(time.Millisecond)),
		Target:   "0 B",
		Pass:     r.mem.released == 0 && r.mem.lapsed == 0,
	}, harness.Target{
		Name:     fmt.Sprintf("Memory: keys left after %s area codes taken and released", count(float64(r.many.lease.Ops))),
		Measured: count(float64(r.many.left)),
		Target:   "0",
		Pass:     r.many.left == 0,
	})
	return out
}

func (r results) pair(name string) pairResult {
	for _, p := range r.pairs {
		if p.name == name {
			return p
		}
	}
	return pairResult{}
}

func (r results) cost(script string, full bool) scriptCost {
	for _, c := range r.costs {
		if c.script == script && c.full == full {
			return c
		}
	}
	return scriptCost{}
}

func (r results) alloc(call string) float64 {
	for _, a := range r.allocs {
		if a.call == call {
			return a.allocs
		}
	}
	return 0
}

// Report implements harness.Suite.
func (b *bench) Report(rep *harness.Report) {
	r := b.results
	rep.Title = "slotlimit benchmarks"
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("Run: %s; each phase %v (the no-contention phases %d rounds each, taken in turns); one go-redis client with a pool of %d connections for every variant.",
			rep.Machine.Date, b.Duration, b.rounds, b.Pool),
		fmt.Sprintf("These figures are ratios within one run on a shared, noisy %d-core machine where Redis, the load and its goroutines share the cores. Absolute numbers move from run to run; compare rows of the same run, which is what the budgets do.", rep.Machine.CPUs),
	)

	rep.Add(harness.TargetTable("Budgets", "", r.budgets()))

	t := harness.Table{
		Title: fmt.Sprintf("1. No contention: take and give back, %d workers, distinct holders, one key, limit %d", b.Workers, highLimit),
		Intro: "Every try succeeds, so attempts/s equal pairs/s. Latencies are of each call as the caller sees it; Redis µs per pair is the server time of the top-level commands (INFO commandstats usec, of INCR and DECR or of EVALSHA).",
		Head:  []string{"variant", "pairs/s", "acquire p50 / p99 / p99.9 (µs)", "release p50 / p99 / p99.9 (µs)", "Redis µs per pair", "commands sent per pair"},
	}
	for _, p := range r.pairs {
		t.Add(p.name, count(p.Rate(p.Ops)), harness.Percentiles(p.acquire), harness.Percentiles(p.release),
			f2(p.serverUsecPerPair()), f2(ratio(p.Sent, p.Ops)))
	}
	rep.Add(t)

	t = harness.Table{
		Title: "Redis time per script call",
		Intro: fmt.Sprintf("INFO commandstats sums every script under `evalsha`, so each script runs alone in its phase, %d workers, after CONFIG RESETSTAT. Takes go to keys of 60 slots, one key after another per worker, and the gives then empty the same keys. The last three rows are the refusal's: a key at its limit, every try refused, by the library's acquire script, by a script of just the two reads that refusal makes (with the same keys and arguments; a refusal cannot do without them while a holder asking again renews its lease), and by the seed's.", b.Workers),
		Head:  []string{"script", "load", "calls/s", "usec_per_call"},
	}
	if a := r.pair(nameIncr); a.Ops > 0 {
		t.Add("INCR", "baseline (a) pairs", count(a.Rate(a.Server["incr"].Calls)), f2(a.Server.PerCall("incr")))
		t.Add("DECR", "baseline (a) pairs", count(a.Rate(a.Server["decr"].Calls)), f2(a.Server.PerCall("decr")))
	}
	for _, c := range r.costs {
		t.Add(c.script, c.load, count(c.Rate(c.Server[c.command].Calls)), f2(c.usecPerCall()))
	}
	rep.Add(t)

	t = harness.Table{
		Title: fmt.Sprintf("2. Contention: limit %d, %d workers, each holding its slot %v", areaLimit, b.contenders, b.hold),
		Intro: "A poller calls TryAcquire again at once after a refusal; a waiter calls Acquire. Slots held is sampled about every millisecond with ZCOUNT on the lease set, from a client of its own. Commands sent count the load client's, release included; Redis commands count what the server ran, the commands inside scripts included and the sampler's excluded; Redis µs is the server time of the scripts (EVALSHA usec), releases included.",
		Head:  []string{"mode", "acquires/s", "acquire-script calls/s (attempts)", "slots held / limit", "in guarded section / limit", "commands sent per acquire", "Redis commands per acquire", "Redis µs per acquire"},
	}
	for _, c := range r.contended {
		t.Add(c.mode, count(c.Rate(c.acquires)), count(c.Rate(c.tries)), f3(c.held), f3(c.inSection),
			f2(ratio(c.Sent, c.acquires)), f2(ratio(c.Server.Commands(), c.acquires)), f2(ratio(c.Server.Usec("evalsha"), c.acquires)))
	}
	rep.Add(t)

	k := r.many
	t = harness.Table{
		Title: fmt.Sprintf("3. Many keys: one TryAcquire+Release on each of %s area codes, %d workers", count(float64(k.keys)), b.Workers),
		Intro: fmt.Sprintf("Each area code has a key of its own, limit %d, and a Limiter made for it with New.", areaLimit),
		Head:  []string{"area codes done", "pairs/s", "acquire p50 / p99 / p99.9 (µs)", "release p50 / p99 / p99.9 (µs)", "Redis µs per pair", "keys left after"},
	}
	t.Add(count(float64(k.lease.Ops)), count(k.lease.Rate(k.lease.Ops)), harness.Percentiles(k.lease.acquire), harness.Percentiles(k.lease.release),
		f2(k.lease.serverUsecPerPair()), count(float64(k.left)))
	rep.Add(t)

	m := r.mem
	t = harness.Table{
		Title: "Memory",
		Intro: fmt.Sprintf("MEMORY USAGE (SAMPLES 0) summed over the %d keys a Limiter may use, as its calls name them; a key that does not exist counts 0. Holder IDs are 15-byte device IDs. MEMORY USAGE does not expire a key, so a lapsed key counts until Redis's own expiry frees it; it is read every 10 ms, for at most %v.", m.keys, reclaimWithin),
		Head:  []string{"key", "MEMORY USAGE"},
	}
	t.Add(fmt.Sprintf("one area code with 60 holders, after a refused try (lease set encoding: %s)", m.encoding), bytes(m.full))
	t.Add("the seed's counter at 60", bytes(m.counter))
	t.Add("the area code after all 60 released", bytes(m.released))
	t.Add("the area code with 60 leases of 100 ms, before they lapse", bytes(m.lapsedAt))
	t.Add(fmt.Sprintf("the same, %v after they lapsed, never released nor read", m.reclaimed.Round(time.Millisecond)), bytes(m.lapsed))
	rep.Add(t)

	t = harness.Table{
		Title: "Batch: a burst of 100 holders",
		Intro: "Each caller takes 100 slots on a key of its own (limit 100) and gives them back: by 100 TryAcquire calls then 100 Release calls, or by one TryAcquireBatch and one ReleaseBatch.",
		Head:  []string{"callers", "way", "pairs/s", "per burst p50 / p99 / p99.9 (µs)", "Redis µs per pair", "round trips per 100 pairs"},
	}
	for _, x := range r.bursts {
		for _, v := range []struct {
			way string
			ph  harness.Phase
			lat harness.Timings
		}{{"100 single calls", x.single, x.singleLat}, {"TryAcquireBatch + ReleaseBatch", x.batch, x.batchLat}} {
			pairs := v.ph.Ops * batchSize
			t.Add(strconv.Itoa(x.callers), v.way, count(v.ph.Rate(pairs)), harness.Percentiles(v.lat),
				f2(ratio(v.ph.Server.Usec("evalsha"), pairs)), fmt.Sprintf("%.0f", 100*ratio(v.ph.Trips, pairs)))
		}
	}
	rep.Add(t)

	t = harness.Table{
		Title: "Allocations per call",
		Intro: fmt.Sprintf("testing.AllocsPerRun(%d) in this process, on the same warmed client. The go-redis rows pass the same KEYS and ARGV as the library and read the reply as it does; the acquires renew one holder's lease.", allocRuns),
		Head:  []string{"call", "allocs/op"},
	}
	for _, a := range r.allocs {
		t.Add(a.call, f2(a.allocs))
	}
	rep.Add(t)
}

func callers(n int) string {
	if n == 1 {
		return "one caller"
	}
	return fmt.Sprintf("%d callers", n)
}
