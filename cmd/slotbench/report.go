package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// results are every figure of one run.
type results struct {
	opts
	command   string
	server    string
	machine   machine
	allocs    []allocRow
	pairs     []pairResult
	costs     []scriptCost
	contended []contended
	many      manyKeys
	mem       memory
	bursts    []burst
}

// machine describes where the run ran.
type machine struct {
	cpus  int
	model string
	goVer string
	redis string
	date  string
}

func describeMachine(ctx context.Context, admin *redis.Client) (machine, error) {
	v, err := redisVersion(ctx, admin)
	if err != nil {
		return machine{}, err
	}
	return machine{
		cpus:  runtime.NumCPU(),
		model: cpuModel(),
		goVer: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		redis: v,
		date:  time.Now().UTC().Format("2006-01-02 15:04 UTC"),
	}, nil
}

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// A budget is one performance target and whether the run met it.
type budget struct {
	name     string
	measured string
	target   string
	ratio    string
	pass     bool
}

func (r results) budgets() []budget {
	var out []budget
	raw, lib := r.pair(nameRaw), r.pair(nameLimiter)
	rawRate, libRate := raw.rate(raw.ops), lib.rate(lib.ops)
	out = append(out, budget{
		name:     "Library overhead: Limiter pairs/s ≥ 0.95 × bare EVALSHA of its scripts (b)",
		measured: fmt.Sprintf("%s vs %s pairs/s", count(libRate), count(rawRate)),
		target:   "≥ 0.95×",
		ratio:    times(libRate / rawRate),
		pass:     libRate >= 0.95*rawRate,
	})

	lease, seed := r.cost("library acquire", true).usecPerCall(), r.cost("seed acquire", true).usecPerCall()
	floor := r.cost(nameTwoReads, true).usecPerCall()
	out = append(out, budget{
		name:     "Server cost: acquire script usec_per_call ≤ 1.5 × the seed's, full key, refusals",
		measured: fmt.Sprintf("%.2f vs %.2f µs (its two reads alone: %.2f µs, %s)", lease, seed, floor, times(floor/seed)),
		target:   "≤ 1.5×",
		ratio:    times(lease / seed),
		pass:     lease <= 1.5*seed,
	})

	for _, x := range r.bursts {
		single, batch := x.single.rate(x.single.ops*batchSize), x.batch.rate(x.batch.ops*batchSize)
		out = append(out, budget{
			name:     fmt.Sprintf("Batch: TryAcquireBatch+ReleaseBatch of 100 ≥ 5 × 100 single calls, %s", callers(x.callers)),
			measured: fmt.Sprintf("%s vs %s pairs/s", count(batch), count(single)),
			target:   "≥ 5×",
			ratio:    times(batch / single),
			pass:     batch >= 5*single,
		})
	}

	evalsha, try := r.alloc(allocEvalSha), r.alloc(allocTryAcquire)
	out = append(out, budget{
		name:     "Allocations: TryAcquire ≤ go-redis EvalSha + 5",
		measured: fmt.Sprintf("%.0f vs %.0f allocs/op", try, evalsha),
		target:   "≤ +5",
		ratio:    fmt.Sprintf("%+.0f", try-evalsha),
		pass:     try <= evalsha+5,
	})

	out = append(out, budget{
		name:     "Memory: one key with 60 holders ≤ 2 KB",
		measured: bytesOf(r.mem.full),
		target:   "≤ 2,048 B",
		ratio:    times(float64(r.mem.full) / 2048),
		pass:     r.mem.full <= 2048,
	}, budget{
		name:     "Memory: an idle key costs 0 bytes (all released; all lapsed, never read again)",
		measured: fmt.Sprintf("%s; %s %s after the lapse", bytesOf(r.mem.released), bytesOf(r.mem.lapsed), r.mem.reclaimed.Round(time.Millisecond)),
		target:   "0 B",
		ratio:    "",
		pass:     r.mem.released == 0 && r.mem.lapsed == 0,
	}, budget{
		name:     fmt.Sprintf("Memory: keys left after %s area codes taken and released", count(float64(r.many.lease.ops))),
		measured: count(float64(r.many.left)),
		target:   "0",
		ratio:    "",
		pass:     r.many.left == 0,
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

// write writes the report in markdown.
func (r results) write(w io.Writer) {
	m := r.machine
	fmt.Fprintf(w, "# slotlimit benchmarks\n\n")
	fmt.Fprintf(w, "Produced by `cmd/slotbench`, run from the repository root as:\n\n    %s\n\n", r.command)
	fmt.Fprintf(w, "- Machine: %d CPUs (nproc), %s; %s; Redis %s, %s.\n", m.cpus, m.model, m.goVer, m.redis, r.server)
	fmt.Fprintf(w, "- Run: %s; each phase %v (the no-contention phases %d rounds each, taken in turns); one go-redis client with a pool of %d connections for every variant.\n",
		m.date, r.duration, r.rounds, r.pool)
	fmt.Fprintf(w, "- These figures are ratios within one run on a shared, noisy %d-core machine where Redis, the load and its goroutines share the cores. Absolute numbers move from run to run; compare rows of the same run, which is what the budgets do.\n\n", m.cpus)

	fmt.Fprintf(w, "## Budgets\n\n")
	t := table{head: []string{"budget", "measured", "target", "ratio", "result"}}
	for _, b := range r.budgets() {
		result := "PASS"
		if !b.pass {
			result = "**FAIL**"
		}
		t.add(b.name, b.measured, b.target, b.ratio, result)
	}
	t.write(w)

	fmt.Fprintf(w, "## 1. No contention: take and give back, %d workers, distinct holders, one key, limit %d\n\n", r.workers, highLimit)
	fmt.Fprintf(w, "Every try succeeds, so attempts/s equal pairs/s. Latencies are of each call as the caller sees it; Redis µs per pair is the server time of the top-level commands (INFO commandstats usec, of INCR and DECR or of EVALSHA).\n\n")
	t = table{head: []string{"variant", "pairs/s", "acquire p50 / p99 / p99.9 (µs)", "release p50 / p99 / p99.9 (µs)", "Redis µs per pair", "commands sent per pair"}}
	for _, p := range r.pairs {
		t.add(p.name, count(p.rate(p.ops)), percentiles(p.acquire), percentiles(p.release),
			fmt.Sprintf("%.2f", p.serverUsecPerPair()), fmt.Sprintf("%.2f", ratio(p.sent, p.ops)))
	}
	t.write(w)

	fmt.Fprintf(w, "## Redis time per script call\n\n")
	fmt.Fprintf(w, "INFO commandstats sums every script under `evalsha`, so each script runs alone in its phase, %d workers, after CONFIG RESETSTAT. Takes go to keys of 60 slots, one key after another per worker, and the gives then empty the same keys. The last three rows are the server-cost budget's: a key at its limit, every try refused, by the library's acquire script, by a script of just the two reads that refusal makes (with the same keys and arguments; a refusal cannot do without them while a holder asking again renews its lease), and by the seed's.\n\n", r.workers)
	t = table{head: []string{"script", "load", "calls/s", "usec_per_call"}}
	if a := r.pair(nameIncr); a.ops > 0 {
		t.add("INCR", "baseline (a) pairs", count(a.rate(a.server["incr"].calls)), fmt.Sprintf("%.2f", a.server.perCall("incr")))
		t.add("DECR", "baseline (a) pairs", count(a.rate(a.server["decr"].calls)), fmt.Sprintf("%.2f", a.server.perCall("decr")))
	}
	for _, c := range r.costs {
		t.add(c.script, c.load, count(c.rate(c.server[c.command].calls)), fmt.Sprintf("%.2f", c.usecPerCall()))
	}
	t.write(w)

	fmt.Fprintf(w, "## 2. Contention: limit %d, %d workers, each holding its slot %v\n\n", areaLimit, r.contenders, r.hold)
	fmt.Fprintf(w, "A poller calls TryAcquire again at once after a refusal; a waiter calls Acquire. Slots held is sampled about every millisecond with ZCOUNT on the lease set, from a client of its own. Commands sent count the load client's, release included; Redis commands count what the server ran, the commands inside scripts included and the sampler's excluded; Redis µs is the server time of the scripts (EVALSHA usec), releases included.\n\n")
	t = table{head: []string{"mode", "acquires/s", "acquire-script calls/s (attempts)", "slots held / limit", "in guarded section / limit", "commands sent per acquire", "Redis commands per acquire", "Redis µs per acquire"}}
	for _, c := range r.contended {
		t.add(c.mode, count(c.rate(c.acquires)), count(c.rate(c.tries)), fmt.Sprintf("%.3f", c.held), fmt.Sprintf("%.3f", c.inSection),
			fmt.Sprintf("%.2f", ratio(c.sent, c.acquires)), fmt.Sprintf("%.2f", ratio(c.server.commands(), c.acquires)),
			fmt.Sprintf("%.2f", ratio(c.server.usec("evalsha"), c.acquires)))
	}
	t.write(w)

	k := r.many
	fmt.Fprintf(w, "## 3. Many keys: one TryAcquire+Release on each of %s area codes, %d workers\n\n", count(float64(k.keys)), r.workers)
	fmt.Fprintf(w, "Each area code has a key of its own, limit %d, and a Limiter made for it with New.\n\n", areaLimit)
	t = table{head: []string{"area codes done", "pairs/s", "acquire p50 / p99 / p99.9 (µs)", "release p50 / p99 / p99.9 (µs)", "Redis µs per pair", "keys left after"}}
	t.add(count(float64(k.lease.ops)), count(k.lease.rate(k.lease.ops)), percentiles(k.lease.acquire), percentiles(k.lease.release),
		fmt.Sprintf("%.2f", k.lease.serverUsecPerPair()), count(float64(k.left)))
	t.write(w)

	fmt.Fprintf(w, "## Memory\n\n")
	fmt.Fprintf(w, "MEMORY USAGE (SAMPLES 0) summed over the %d keys a Limiter may use, as its calls name them; a key that does not exist counts 0. Holder IDs are 15-byte device IDs. MEMORY USAGE does not expire a key, so a lapsed key counts until Redis's own expiry frees it; it is read every 10 ms, for at most %v.\n\n", r.mem.keys, reclaimWithin)
	t = table{head: []string{"key", "MEMORY USAGE"}}
	t.add(fmt.Sprintf("one area code with 60 holders, after a refused try (lease set encoding: %s)", r.mem.encoding), bytesOf(r.mem.full))
	t.add("the seed's counter at 60", bytesOf(r.mem.counter))
	t.add("the area code after all 60 released", bytesOf(r.mem.released))
	t.add("the area code with 60 leases of 100 ms, before they lapse", bytesOf(r.mem.lapsedAt))
	t.add(fmt.Sprintf("the same, %v after they lapsed, never released nor read", r.mem.reclaimed.Round(time.Millisecond)), bytesOf(r.mem.lapsed))
	t.write(w)

	fmt.Fprintf(w, "## Batch: a burst of 100 holders\n\n")
	fmt.Fprintf(w, "Each caller takes 100 slots on a key of its own (limit 100) and gives them back: by 100 TryAcquire calls then 100 Release calls, or by one TryAcquireBatch and one ReleaseBatch.\n\n")
	t = table{head: []string{"callers", "way", "pairs/s", "per burst p50 / p99 / p99.9 (µs)", "Redis µs per pair", "round trips per 100 pairs"}}
	for _, x := range r.bursts {
		for _, v := range []struct {
			way string
			ph  phase
			lat timings
		}{{"100 single calls", x.single, x.singleLat}, {"TryAcquireBatch + ReleaseBatch", x.batch, x.batchLat}} {
			pairs := v.ph.ops * batchSize
			t.add(strconv.Itoa(x.callers), v.way, count(v.ph.rate(pairs)), percentiles(v.lat),
				fmt.Sprintf("%.2f", ratio(v.ph.server.usec("evalsha"), pairs)), fmt.Sprintf("%.0f", 100*ratio(v.ph.trips, pairs)))
		}
	}
	t.write(w)

	fmt.Fprintf(w, "## Allocations per call\n\n")
	fmt.Fprintf(w, "testing.AllocsPerRun(%d) in this process, on the same warmed client. The go-redis rows pass the same KEYS and ARGV as the library and read the reply as it does; the acquires renew one holder's lease.\n\n", allocRuns)
	t = table{head: []string{"call", "allocs/op"}}
	for _, a := range r.allocs {
		t.add(a.call, fmt.Sprintf("%.2f", a.allocs))
	}
	t.write(w)
}

// A table is a markdown table.
type table struct {
	head []string
	rows [][]string
}

func (t *table) add(cells ...string) {
	t.rows = append(t.rows, cells)
}

func (t *table) write(w io.Writer) {
	line := func(cells []string) {
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	line(t.head)
	sep := make([]string, len(t.head))
	for i := range sep {
		sep[i] = "---"
	}
	line(sep)
	for _, r := range t.rows {
		line(r)
	}
	fmt.Fprintln(w)
}

// count formats n rounded, with thousands separators.
func count(n float64) string {
	s := strconv.FormatInt(int64(n+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func times(x float64) string {
	return fmt.Sprintf("%.2f×", x)
}

func bytesOf(n int64) string {
	return count(float64(n)) + " B"
}

func ratio(n, d int64) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

func callers(n int) string {
	if n == 1 {
		return "one caller"
	}
	return fmt.Sprintf("%d callers", n)
}

// percentiles formats p50, p99 and p99.9 in µs.
func percentiles(t timings) string {
	q := t.quantiles(0.50, 0.99, 0.999)
	us := func(d time.Duration) string {
		return count(float64(d.Microseconds()))
	}
	return us(q[0]) + " / " + us(q[1]) + " / " + us(q[2])
}
