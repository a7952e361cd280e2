package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// results are every figure of one run.
type results struct {
	handed    handoffs
	allocs    []allocRow
	pairs     []harness.PairResult
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

// Target figures that no flag changes.
const (
	targetPairCost   = 1.8  // Redis µs of a TryAcquire+Release pair, over the classic pair
	targetPairRate   = 0.80 // pairs/s over INCR+DECR pairs/s
	targetRefusal    = 1.70 // Redis µs of a refusal at a full key, over the classic
	targetMemory     = 2048 // bytes of a key with 60 holders
	targetAllocs     = 1.0  // allocations of TryAcquire, over go-redis EvalSha's
	targetHandoff    = 1.5  // hand-off p50 over PING p50
	targetShare      = 0.90 // share of the limit in the guarded section, Acquire, the longest hold
	targetCommands   = 3    // commands sent per waited acquire, release included
	targetShareHold  = 20 * time.Millisecond
	targetBatchRatio = 5 // batch pairs/s over single calls' pairs/s
)

// targets returns the rows of the targets table, each a ratio to a
// baseline of the same run or a fixed figure.
func (b *bench) targets() []harness.Target {
	r := b.results
	var out []harness.Target

	lib := r.cost(nameLibAcquire, false).usecPerCall() + r.cost(nameLibRelease, false).usecPerCall()
	seed := r.cost(nameSeedAcquire, false).usecPerCall() + r.cost(nameSeedRelease, false).usecPerCall()
	out = append(out, harness.Target{
		Name:     "Redis µs per TryAcquire+Release pair / classic scripts' pair",
		Measured: fmt.Sprintf("%.2f vs %.2f µs", lib, seed),
		Target:   "≤ 1.8×",
		Ratio:    times(harness.Div(lib, seed)),
		Pass:     seed > 0 && lib <= targetPairCost*seed,
	})

	incr, pair := r.pair(nameIncr), r.pair(nameLimiter)
	incrRate, pairRate := incr.Rate(incr.Ops), pair.Rate(pair.Ops)
	out = append(out, harness.Target{
		Name:     fmt.Sprintf("pairs/s / raw INCR+DECR pairs/s, %d callers", b.Workers),
		Measured: fmt.Sprintf("%s vs %s pairs/s", count(pairRate), count(incrRate)),
		Target:   "≥ 0.80×",
		Ratio:    times(harness.Div(pairRate, incrRate)),
		Pass:     incrRate > 0 && pairRate >= targetPairRate*incrRate,
	})

	refusal, seedRefusal := r.cost(nameLibAcquire, true).usecPerCall(), r.cost(nameSeedAcquire, true).usecPerCall()
	floor := r.cost(nameTwoReads, true).usecPerCall()
	out = append(out, harness.Target{
		Name:     "Redis µs per refusal at a full key / classic refusal",
		Measured: fmt.Sprintf("%.2f vs %.2f µs (its two reads alone: %.2f µs, %s)", refusal, seedRefusal, floor, times(harness.Div(floor, seedRefusal))),
		Target:   "≤ 1.70×",
		Ratio:    times(harness.Div(refusal, seedRefusal)),
		Pass:     seedRefusal > 0 && refusal <= targetRefusal*seedRefusal,
	})

	out = append(out, harness.Target{
		Name:     "memory, 60 holders",
		Measured: bytes(r.mem.full),
		Target:   "≤ 2 KB",
		Ratio:    times(float64(r.mem.full) / targetMemory),
		Pass:     r.mem.full <= targetMemory,
	})

	evalsha, try := r.alloc(allocEvalSha), r.alloc(allocTryAcquire)
	out = append(out, harness.Target{
		Name:     "allocations per TryAcquire / go-redis EvalSha",
		Measured: fmt.Sprintf("%.0f vs %.0f allocs/op", try, evalsha),
		Target:   "no worse (≤ 1.0×)",
		Ratio:    times(harness.Div(try, evalsha)),
		Pass:     evalsha > 0 && try <= targetAllocs*evalsha,
	})

	h := r.handed
	gap, ping := h.wait.gap.Quantiles(0.5, 0.99), h.ping.Quantiles(0.5, 0.99)
	out = append(out, harness.Target{
		Name: "hand-off latency p50 / PING round trip p50",
		Measured: fmt.Sprintf("%s vs %s µs (p99: %s vs %s µs; %d hand-offs)",
			harness.Micros(gap[0]), harness.Micros(ping[0]), harness.Micros(gap[1]), harness.Micros(ping[1]), h.wait.rounds),
		Target: "≤ 1.5×",
		Ratio:  times(harness.Div(float64(gap[0]), float64(ping[0]))),
		Pass:   ping[0] > 0 && h.wait.rounds > 0 && float64(gap[0]) <= targetHandoff*float64(ping[0]),
	})

	c := r.shareRow()
	out = append(out, harness.Target{
		Name:     fmt.Sprintf("share of the limit inside the guarded section, %d workers, limit %d, %s holds", b.contenders, areaLimit, millis(c.hold)),
		Measured: f3(c.inSection),
		Target:   "≥ 0.90",
		Ratio:    times(c.inSection / targetShare),
		Pass:     c.inSection >= targetShare,
	})

	perWait := ratio(h.wait.sent, int64(h.wait.rounds))
	out = append(out, harness.Target{
		Name:     "commands sent per waited acquire, release included",
		Measured: fmt.Sprintf("%.2f (%d commands, %d waits)", perWait, h.wait.sent, h.wait.rounds),
		Target:   "≤ 3",
		Ratio:    times(perWait / targetCommands),
		Pass:     h.wait.rounds > 0 && perWait <= targetCommands,
	})
	return out
}

// shareRow returns the contention phase the share target reads: Acquire
// with 20ms holds, or with the longest hold run when none was 20ms.
func (r results) shareRow() contended {
	var best contended
	for _, c := range r.contended {
		if !c.wait {
			continue
		}
		if c.hold == targetShareHold {
			return c
		}
		if c.hold > best.hold {
			best = c
		}
	}
	return best
}

// budgets returns the other figures the run is held to.
func (b *bench) budgets() []harness.Target {
	r := b.results
	var out []harness.Target
	raw, lib := r.pair(nameRaw), r.pair(nameLimiter)
	rawRate, libRate := raw.Rate(raw.Ops), lib.Rate(lib.Ops)
	out = append(out, harness.Target{
		Name:     "Library overhead: Limiter pairs/s / bare EVALSHA of its scripts (b)",
		Measured: fmt.Sprintf("%s vs %s pairs/s", count(libRate), count(rawRate)),
		Target:   "≥ 0.95×",
		Ratio:    times(harness.Div(libRate, rawRate)),
		Pass:     rawRate > 0 && libRate >= 0.95*rawRate,
	})
	for _, x := range r.bursts {
		single, batch := x.single.Rate(x.single.Ops*batchSize), x.batch.Rate(x.batch.Ops*batchSize)
		out = append(out, harness.Target{
			Name:     fmt.Sprintf("Batch: TryAcquireBatch+ReleaseBatch of 100 / 100 single calls, %s", callers(x.callers)),
			Measured: fmt.Sprintf("%s vs %s pairs/s", count(batch), count(single)),
			Target:   "≥ 5×",
			Ratio:    times(harness.Div(batch, single)),
			Pass:     single > 0 && batch >= targetBatchRatio*single,
		})
	}
	out = append(out, harness.Target{
		Name:     "Memory: an idle key (all released; all lapsed, never read again)",
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

func (r results) pair(name string) harness.PairResult {
	for _, p := range r.pairs {
		if p.Name == name {
			return p
		}
	}
	return harness.PairResult{}
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
	rep.Title = "slotlimit Limiter benchmarks"
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("Run: %s; each phase %v (the no-contention phases %d rounds each, taken in turns); one go-redis client with a pool of %d connections for every variant.",
			rep.Machine.Date, b.Duration, b.Rounds, b.Pool),
		fmt.Sprintf("These figures are ratios within one run on a shared, noisy %d-core machine where Redis, the load and its goroutines share the cores. Absolute numbers move from run to run; compare rows of the same run, which is what the targets do.", rep.Machine.CPUs),
	)

	rep.Add(harness.TargetTable("Targets",
		"Each figure against a baseline measured in this run, or against a fixed figure, where the ratio is the measured over the target. "+
			"Redis µs are INFO commandstats usec_per_call of each script run alone in its phase (see Redis time per script call): a pair is the library's acquire of a new lease plus its release, against the classic granted acquire plus its release. "+
			"Pairs/s are the no-contention phase's. The hand-off and the commands per waited acquire come from the hand-off phase, the share of the limit from the contention phase with Acquire.",
		b.targets()))
	rep.Add(harness.TargetTable("Other budgets", "", b.budgets()))

	t := harness.Table{
		Title: fmt.Sprintf("1. No contention: take and give back, %d workers, distinct holders, one key, limit %d", b.Workers, highLimit),
		Intro: "Every try succeeds, so attempts/s equal pairs/s. Latencies are of each call as the caller sees it; Redis µs per pair is the server time of the top-level commands (INFO commandstats usec, of INCR and DECR or of EVALSHA).",
		Head:  []string{"variant", "pairs/s", "acquire p50 / p99 / p99.9 (µs)", "release p50 / p99 / p99.9 (µs)", "Redis µs per pair", "commands sent per pair"},
	}
	for _, p := range r.pairs {
		t.Add(p.Name, count(p.PairsPerSecond()), harness.Percentiles(p.Acquire), harness.Percentiles(p.Release),
			f2(p.ServerUsecPerPair()), f2(p.CommandsPerPair()))
	}
	rep.Add(t)

	t = harness.Table{
		Title: "Redis time per script call",
		Intro: fmt.Sprintf("INFO commandstats sums every script under `evalsha`, so each script runs alone in its phase, %d workers, after CONFIG RESETSTAT. Takes go to keys of 60 slots, one key after another per worker, and the gives then empty the same keys. The last three rows are the refusal's: a key at its limit, every try refused, by the library's acquire script, by a script of just the two reads that refusal makes (with the same keys and arguments; a refusal cannot do without them while a holder asking again renews its lease), and by the classic.", b.Workers),
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
		Title: fmt.Sprintf("2. Contention: limit %d, %d workers, each holding its slot %s", areaLimit, b.contenders, holdList(b.holds)),
		Intro: "A poller calls TryAcquire again at once after a refusal; a waiter calls Acquire. Slots held is sampled about every millisecond with ZCOUNT on the lease set, from a client of its own. Commands sent count the load client's, release included; Redis commands count what the server ran, the commands inside scripts included and the sampler's excluded; Redis µs is the server time of the scripts (EVALSHA usec), releases included.",
		Head:  []string{"hold", "mode", "acquires/s", "acquire-script calls/s (attempts)", "slots held / limit", "in guarded section / limit", "commands sent per acquire", "Redis commands per acquire", "Redis µs per acquire"},
	}
	for _, c := range r.contended {
		t.Add(millis(c.hold), c.mode, count(c.Rate(c.acquires)), count(c.Rate(c.tries)), f3(c.held), f3(c.inSection),
			f2(ratio(c.Sent, c.acquires)), f2(ratio(c.Server.Commands(), c.acquires)), f2(ratio(c.Server.Usec("evalsha"), c.acquires)))
	}
	rep.Add(t)

	h := r.handed
	t = harness.Table{
		Title: "Hand-off latency: limit 1, one holder, one waiter, an idle server",
		Intro: fmt.Sprintf("A holder on the load client holds the only slot; a waiter on a client of its own starts to wait, and once its first try has come back refused (so it is queued), the holder calls Release. The gap runs from Release returning to the waiter's acquire returning with the slot, and is negative when the waiter's reply beats the holder's; no sample is clamped. An Acquire is woken by the release's notice and claims the slot with one more call; a poller calls TryAcquire again at once after each refusal. PING is timed on the load client %d times in each Acquire round, while the waiter is queued. Each way runs %d rounds at most, after %d unrecorded, and at most %v. Commands sent are the waiter's client's, its release included.", pingsPerRound, b.handoffs, handoffWarmup, handoffTime*b.Duration),
		Head:  []string{"way", "samples", "p50 (µs)", "p99 (µs)", "below 0", "p50 / PING p50", "commands sent per acquire"},
	}
	pingP50 := h.ping.Quantiles(0.5)[0]
	for _, m := range []handoffMode{h.wait, h.poll} {
		q := m.gap.Quantiles(0.5, 0.99)
		t.Add(m.mode, count(float64(m.rounds)), harness.Micros(q[0]), harness.Micros(q[1]), count(float64(m.gap.Below(0))),
			times(harness.Div(float64(q[0]), float64(pingP50))), f2(ratio(m.sent, int64(m.rounds))))
	}
	q := h.ping.Quantiles(0.5, 0.99)
	t.Add("PING round trip, the load client", count(float64(h.ping.Len())), harness.Micros(q[0]), harness.Micros(q[1]), "", "1.00×", "1.00")
	rep.Add(t)

	k := r.many
	t = harness.Table{
		Title: fmt.Sprintf("3. Many keys: one TryAcquire+Release on each of %s area codes, %d workers", count(float64(k.keys)), b.Workers),
		Intro: fmt.Sprintf("Each area code has a key of its own, limit %d, and a Limiter made for it with New.", areaLimit),
		Head:  []string{"area codes done", "pairs/s", "acquire p50 / p99 / p99.9 (µs)", "release p50 / p99 / p99.9 (µs)", "Redis µs per pair", "keys left after"},
	}
	t.Add(count(float64(k.lease.Ops)), count(k.lease.Rate(k.lease.Ops)), harness.Percentiles(k.lease.Acquire), harness.Percentiles(k.lease.Release),
		f2(k.lease.ServerUsecPerPair()), count(float64(k.left)))
	rep.Add(t)

	m := r.mem
	t = harness.Table{
		Title: "Memory",
		Intro: fmt.Sprintf("MEMORY USAGE (SAMPLES 0) summed over the %d keys a Limiter may use, as its calls name them; a key that does not exist counts 0. Holder IDs are 15-byte device IDs. MEMORY USAGE does not expire a key, so a lapsed key counts until Redis's own expiry frees it; it is read every 10 ms, for at most %v.", m.keys, reclaimWithin),
		Head:  []string{"key", "MEMORY USAGE"},
	}
	t.Add(fmt.Sprintf("one area code with 60 holders, after a refused try (lease set encoding: %s)", m.encoding), bytes(m.full))
	t.Add("the classic counter at 60", bytes(m.counter))
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

// millis formats a hold as "2 ms" or "0.5 ms".
func millis(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64) + " ms"
}

// holdList formats holds as "2 ms or 20 ms".
func holdList(holds harness.Durations) string {
	s := make([]string, len(holds))
	for i, d := range holds {
		s[i] = millis(d)
	}
	return strings.Join(s, " or ")
}

func callers(n int) string {
	if n == 1 {
		return "one caller"
	}
	return fmt.Sprintf("%d callers", n)
}
