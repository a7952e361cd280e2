package main

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// A metric is the figure a row compares.
type metric int

const (
	usec metric = iota // Redis µs per operation
	rate               // operations per second
	p50                // median time of one call, as its caller saw it
	p99                // 99th percentile of a task's due-to-run latency
)

// value returns ph's figure of m.
func (m metric) value(ph phase) float64 {
	switch m {
	case rate:
		return ph.Rate(ph.Ops)
	case p50:
		return float64(ph.p50) / float64(time.Microsecond)
	case p99:
		return float64(ph.p99) / float64(time.Millisecond)
	}
	return usecPerOp(ph.Phase)
}

// A row is one line of the targets: the library's variant against its
// baseline, the ratio of the two, and the target the ratio is held to.
type row struct {
	name     string // as the issue names it
	short    string // the breakdown's title
	baseline string // what the library is compared with
	unit     string // the operation: "pair", "Allow", "task"
	metric   metric
	op       string  // how the ratio meets the target: "≥", "≤" or "<"
	target   float64 // the ratio the row is held to
	lib      result
	base     result
	peers    []result // shown beside the baseline, not held to a target
}

// rounds returns the number of rounds both the library and its baseline
// ran.
func (r row) rounds() int {
	return min(len(r.lib.rounds), len(r.base.rounds))
}

// ratioIn returns the library's figure over the baseline's in round i.
func (r row) ratioIn(i int) float64 {
	return harness.Div(r.metric.value(r.lib.round(i)), r.metric.value(r.base.round(i)))
}

// chosen returns the round whose ratio is the median of the rounds'
// ratios (the lower of the two middle ones for an even number), whose
// figures the report gives, or -1 for a row of no rounds: the variants of
// a row take turns in every round, so that the two figures of a ratio
// come from phases side by side, and the median keeps a stall of the
// shared machine in one round out of the table.
func (r row) chosen() int {
	idx := make([]int, r.rounds())
	for i := range idx {
		idx[i] = i
	}
	if len(idx) == 0 {
		return -1
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(r.ratioIn(a), r.ratioIn(b)) })
	return idx[(len(idx)-1)/2]
}

// ratio returns the library's figure over the baseline's in the chosen
// round.
func (r row) ratio() float64 {
	return r.ratioIn(r.chosen())
}

// pass reports whether the ratio meets the target.
func (r row) pass() bool {
	x := r.ratio()
	switch {
	case x == 0:
		return false
	case r.op == "≥":
		return x >= r.target
	case r.op == "<":
		return x < r.target
	}
	return x <= r.target
}

// measured says the two figures the ratio divides, and the peers', in the
// chosen round.
func (r row) measured() string {
	k := r.chosen()
	lib, base := r.lib.round(k), r.base.round(k)
	f := func(ph phase) string {
		switch r.metric {
		case rate:
			return harness.Count(rate.value(ph))
		case p50:
			return harness.Count(p50.value(ph))
		case p99:
			return fmt.Sprintf("%.1f", p99.value(ph))
		}
		return fmt.Sprintf("%.2f", usec.value(ph))
	}
	unit := map[metric]string{rate: r.unit + "s/s", p50: "µs p50 per " + r.unit, p99: "ms p99", usec: "µs per " + r.unit}[r.metric]
	s := f(lib) + " vs " + f(base) + " " + unit
	if r.metric == p99 {
		s += fmt.Sprintf(" (p50 %.1f vs %.1f ms; %s and %s tasks ran)", p50.value(lib)/1000, p50.value(base)/1000, harness.Count(float64(lib.Ops)), harness.Count(float64(base.Ops)))
	}
	for _, p := range r.peers {
		peer := p.round(k)
		s += fmt.Sprintf("; %s %s (%s)", p.name, f(peer), times(harness.Div(r.metric.value(lib), r.metric.value(peer))))
	}
	return s
}

// today are the bounds of the rows held to "no worse than today": the
// highest ratio of eight costbench runs of 2026-11-29, four of the release
// before issue 29's changes and four after them, taking turns within the
// same hour, the last before coalescing (lock 1.18-1.26×, fixed window
// 1.80-2.17×, recent 1.11-1.27×). One run's ratio alone moves by a tenth
// on a shared machine.
const (
	todayLock   = 1.26
	todayWindow = 2.17
	todayRecent = 1.27
)

// at returns rs[c][v], or a result of nothing when a step failed.
func at(rs [][]result, c, v int) result {
	if c < len(rs) && v < len(rs[c]) {
		return rs[c][v]
	}
	return result{}
}

// rows returns the targets, in the order.
func (b *bench) rows() []row {
	w, crowd := b.Workers, b.crowd
	var lockPeers []result
	for v := 2; v < 4; v++ {
		lockPeers = append(lockPeers, at(b.lock, 0, v))
		lockPeers[v-2].name = strings.SplitN(lockPeers[v-2].name, ":", 2)[0]
	}
	fromToday := func(x float64) string {
		return fmt.Sprintf("; the bound, %.2f×, is the highest ratio of eight runs of the day before coalescing", x)
	}
	return []row{
		{short: "limiter TryAcquire+Release", name: fmt.Sprintf("limiter TryAcquire+Release pairs/s, %d callers on one key ÷ raw INCR+DECR", w), baseline: "raw INCR+DECR of one counter", unit: "pair", metric: rate, op: "≥", target: 2.5, lib: at(b.limiter, 1, 0), base: at(b.limiter, 1, 2)},
		{name: fmt.Sprintf("the same, %d callers", crowd), baseline: "raw INCR+DECR of one counter", unit: "pair", metric: rate, op: "≥", target: 5.0, lib: at(b.limiter, 2, 0), base: at(b.limiter, 2, 2)},
		{short: "limiter TryAcquire+Release", name: fmt.Sprintf("limiter Redis µs per pair, %d callers ÷ a minimal ZSET lease script", w), baseline: "acquire = ZREMRANGEBYSCORE, ZCARD, ZADD, PEXPIRE; release = ZREM", unit: "pair", metric: usec, op: "≤", target: 0.5, lib: at(b.limiter, 1, 0), base: at(b.limiter, 1, 1)},
		{name: "one caller alone: p50 per pair ÷ the minimal ZSET lease script", baseline: "the same scripts, one caller", unit: "pair", metric: p50, op: "≤", target: 1.25, lib: at(b.limiter, 0, 0), base: at(b.limiter, 0, 1)},
		{short: "GCRA Allow", name: fmt.Sprintf("GCRA Allow, %d callers on one key: Redis µs ÷ redis_rate's", w), baseline: "go-redis/redis_rate, the same limit", unit: "Allow", metric: usec, op: "≤", target: 0.5, lib: at(b.gcra, 1, 0), base: at(b.gcra, 1, 1)},
		{name: fmt.Sprintf("GCRA Allow, %d callers on one key: ops/s ÷ redis_rate's", w), baseline: "go-redis/redis_rate, the same limit", unit: "Allow", metric: rate, op: "≥", target: 1.5, lib: at(b.gcra, 1, 0), base: at(b.gcra, 1, 1)},
		{short: "red-packet Grab", name: fmt.Sprintf("red-packet Grab, %d callers on one packet: Redis µs ÷ the classic grab script", w), baseline: "the classic HGET/HSET/RPUSH grab script", unit: "grab", metric: usec, op: "≤", target: 1.0, lib: at(b.grab, 1, 0), base: at(b.grab, 1, 1)},
		{short: "delay queue, per task pushed, run and acked", name: "delay queue, Redis µs per task ÷ asynq (forwarder at 100 ms)", baseline: "hibiken/asynq, pushed, run and acked", unit: "task", metric: usec, op: "≤", target: 0.8, lib: at(b.queue, 0, 0), base: at(b.queue, 0, 1)},
		{name: "delay queue, due-to-run p99 ÷ asynq's", baseline: fmt.Sprintf("hibiken/asynq, %s tasks due in %v", harness.Count(float64(b.tasks)), b.due), unit: "task", metric: p99, op: "<", target: 1.0, lib: at(b.dueRun, 0, 0), base: at(b.dueRun, 0, 1)},
		{short: "lock TryLock+Unlock", name: fmt.Sprintf("lock TryLock+Unlock, %d callers, a key each: Redis µs ÷ SET NX PX + compare-and-delete", w), baseline: "SET NX PX + a compare-and-delete script (bsm/redislock and go-redsync/redsync shown, the ratio to each in brackets)" + fromToday(todayLock), unit: "pair", metric: usec, op: "≤", target: todayLock, lib: at(b.lock, 0, 0), base: at(b.lock, 0, 1), peers: lockPeers},
		{short: "fixed window Allow", name: fmt.Sprintf("fixed window Allow, %d callers, keys of their own: Redis µs ÷ the classic script", w), baseline: "the classic INCR + EXPIRE-on-first-hit script" + fromToday(todayWindow), unit: "Allow", metric: usec, op: "≤", target: todayWindow, lib: at(b.window, 0, 0), base: at(b.window, 0, 1)},
		{short: "recent Add", name: fmt.Sprintf("recent Add, %d callers, lists of their own: Redis µs ÷ the classic script", w), baseline: "the classic ZADD/ZCARD/ZREMRANGEBYRANK script" + fromToday(todayRecent), unit: "Add", metric: usec, op: "≤", target: todayRecent, lib: at(b.recent, 0, 0), base: at(b.recent, 0, 1)},
	}
}

// costHead is the head of the table of targets.
var costHead = []string{"row", "baseline", "measured", "target", "ratio", "result"}

// Report implements harness.Suite.
func (b *bench) Report(r *harness.Report) {
	r.Title = "slotlimit benchmarks: what every primitive costs Redis and its callers"
	var peers []string
	for _, m := range peerModules {
		peers = append(peers, m+" "+harness.ModuleVersion(m))
	}
	r.Notes = []string{
		fmt.Sprintf("Run: %s; on one key at 1, %d and %d callers, the other rows at %d; each phase %v and at most %s operations, %d rounds, the variants of a row taking turns in every round; every variant on one go-redis client with the default options (a pool of 10 connections per CPU; the delay queue's two on a client each).",
			r.Machine.Date, b.Workers, b.crowd, b.Workers, b.Duration, harness.Count(float64(b.MaxOps)), b.Rounds),
		"Peers: " + strings.Join(peers, ", ") + ".",
		"These figures are ratios within one run on a shared, noisy 2-core machine where Redis, the load and its goroutines share the cores, and other work may run beside them. Absolute numbers move from run to run; compare rows of the same run, which is what the targets do.",
	}
	rows := b.rows()
	t := harness.Table{
		Title: "Targets",
		Intro: "Each row is the library's call, made through its public API as a user makes it, against a baseline measured in this run. " +
			"Redis µs per operation is the server time (INFO commandstats usec, CONFIG RESETSTAT before every phase) of the top-level commands the variant's client sent, per operation: " +
			"a script's EVALSHA and an EXEC count the commands they run. Operations per second are those completed; p50 is the median time of one call (of a pair, for the limiter) as its caller saw it. " +
			"The variants of a row take turns in every round, and the ratio, the library's figure over the baseline's, is the median of the rounds' ratios: the figures are that round's.",
		Head: costHead,
	}
	for _, x := range rows {
		res := "PASS"
		if !x.pass() {
			res = "**FAIL**"
		}
		t.Add(x.name, x.baseline, x.measured(), fmt.Sprintf("%s %.2f×", x.op, x.target), times(x.ratio()), res)
	}
	r.Add(t, b.scenarios(), b.everyVariant(), b.plotsTable())
	first := true
	for _, x := range rows {
		if x.metric != usec {
			continue
		}
		k := x.chosen()
		variants := []result{x.lib, x.base}
		if x.lib.name == nameLimiter {
			variants = append(variants, at(b.limiter, 1, 3), at(b.limiter, 1, 2)) // coalescing off and INCR+DECR, in the same round
		}
		bt := breakdownTable(fmt.Sprintf("%s, %d callers", x.short, x.lib.callers), x.unit, k, append(variants, x.peers...))
		if first {
			bt.Intro, first = breakdownIntro, false
		}
		r.Add(bt)
	}
}

// scenarios says what each row's phases ran.
func (b *bench) scenarios() harness.Table {
	t := harness.Table{Title: "What each row runs", Head: []string{"row", "load"}}
	t.Add("limiter", fmt.Sprintf("TryAcquire then Release, each caller a holder of its own, on one key of limit %d and leases of %v, and the same with Config.DisableCoalescing on a key of its own; the minimal lease scripts on one key of their own, scored by the client's clock in ms; INCR then DECR of one counter.", highLimit, leaseTTL))
	t.Add("GCRA", fmt.Sprintf("Allow on one key of %s per second, burst %d, for the library and for redis_rate (a key each): a rate the load passes, so that the key both allows and refuses. The key allows that rate whatever the load, so the share allowed (in the next table) falls as a variant runs faster; a refusal writes nothing, an allowed call one SET.", harness.Count(float64(b.hotRate)), hotBurst))
	t.Add("redpacket", fmt.Sprintf("Grab of one packet of %s shares (Equal shares, as the classic unit amount), a new packet before each phase, which ends before the packet is sold out; each grab by a user of its own; the classic packet as the classic script keeps it, a hash with its stock and a list of grabs.", harness.Count(float64(b.shares))))
	t.Add("delayqueue", fmt.Sprintf("Per task: %d producers push tasks due at once, never more than %d ahead of the consumers; %d consumers take them (the package's Run, acking each as its handler returns; asynq's Server of Concurrency %d, DelayedTaskCheckInterval %v, every other setting at its default); a phase ends when every task pushed is taken; each variant on a client of its own, whose every top-level command counts, its background work included. Due to run: %d producers push %s tasks, each due %v after its push began; a task's latency is the time its handler begins less that due time, for its first run.",
		b.Workers, b.backlog, b.Workers, b.Workers, asynqForward, b.Workers, harness.Count(float64(b.tasks)), b.due))
	t.Add("lock", fmt.Sprintf("TryLock then Unlock, each caller on a key of its own, leases of %v; the bare SET NX PX with a random token, then the compare-and-delete script; redislock's Obtain with no retry, then Release; redsync's Mutex with one try, on its go-redis v9 pool of the same client.", lockTTL))
	t.Add("fixed window", fmt.Sprintf("Allow of %d per hour, each caller calling each of its keys %d times in a row, then a key never used, so that both meet the same mix of new keys, allowed calls and refusals.", b.rate, b.callsPerKey))
	t.Add("recent", fmt.Sprintf("Add of one value, 18 bytes, to lists of %d, each caller owning %d lists of each variant, filled to %d through the variant's own Add before the load, so that every Add adds one item and drops the oldest; the classic script scored by the client's clock in whole seconds.", b.recentMax, b.recentUsers, b.recentMax))
	return t
}

// everyVariant lists every variant's load at each number of callers.
func (b *bench) everyVariant() harness.Table {
	t := harness.Table{
		Title: "Every variant, at each number of callers",
		Intro: "Over every round, summed; p50 is the median of the rounds' p50s, of one call (a pair, for the limiter and the lock) as its caller saw it. Commands sent count the client's, round trips its single commands and pipelines; for the delay queue, per task, every command of its client.",
		Head:  []string{"variant", "callers", "operations/s", "p50 (µs)", "Redis µs per operation", "top-level commands", "commands sent per operation", "round trips per operation", "allowed"},
	}
	for _, rs := range [][][]result{b.limiter, b.gcra, b.grab, b.lock, b.window, b.recent, b.queue} {
		if len(rs) == 0 {
			continue
		}
		for v := range rs[0] {
			for c := range rs {
				r := rs[c][v]
				all := r.all()
				lat, allowed := "–", ""
				if all.p50 > 0 {
					lat = harness.Count(p50.value(all))
				}
				if all.hits > 0 {
					allowed = fmt.Sprintf("%.0f%%", 100*harness.Ratio(all.hits, all.Ops))
				}
				t.Add(r.name, fmt.Sprint(r.callers), harness.Count(rate.value(all)), lat, fmt.Sprintf("%.2f", usecPerOp(all.Phase)),
					strings.Join(r.top(), ", "), fmt.Sprintf("%.2f", harness.Ratio(all.Sent, all.Ops)), fmt.Sprintf("%.2f", harness.Ratio(all.Trips, all.Ops)), allowed)
			}
		}
	}
	return t
}

// plotsTable links the plots from the report.
func (b *bench) plotsTable() harness.Table {
	t := harness.Table{
		Title: "Plots",
		Intro: "Operations per second and p50 per call against the callers on one key, each over every round, as in the table above.",
		Head:  []string{"limiter", "red-packet grab"},
	}
	dir := b.plotDir()
	if b.Out != "" {
		if rel, err := filepath.Rel(filepath.Dir(b.Out), dir); err == nil {
			dir = rel
		}
	}
	link := func(name string) string {
		return fmt.Sprintf("![%s](%s)", name, filepath.ToSlash(filepath.Join(dir, name+".svg")))
	}
	t.Add(link("limiter"), link("grab"))
	return t
}

// breakdownIntro says how to read the breakdowns, above the first.
const breakdownIntro = "Under each row held to Redis µs, every command the server ran per operation (INFO commandstats, in the round of the row's median ratio), for the library's call first, then its baseline: " +
	"\"sent\" are the top-level commands the client sent, whose time is the variant's Redis µs; \"inside\" are those a script or an EXEC ran, whose time is also part of that script's or EXEC's. " +
	"Script overhead is the time of the scripts and EXECs less that of the commands they ran: the Lua interpreter, the arguments, the reply. " +
	"A ratio's floor is what the library's commands cost, with no overhead, over what the baseline costs in all."

// breakdownTable lists, for each variant in round k, every command the
// server ran per operation: those the client sent, and those run inside a
// script or EXEC, then the scripts' own overhead and the Redis µs per
// operation.
func breakdownTable(title, unit string, k int, variants []result) harness.Table {
	t := harness.Table{
		Title: "Breakdown: " + title + ", per " + unit,
		Head:  []string{"variant", "command", "run", "calls per " + unit, "µs per " + unit, "µs per command run"},
	}
	var bds []breakdown
	for _, v := range variants {
		bd := breakdownOf(v.round(k).Phase)
		bds = append(bds, bd)
		name := fmt.Sprintf("%s, %d callers", v.name, v.callers)
		for _, c := range bd.cmds {
			run := "inside"
			if c.top {
				run = "sent"
			}
			t.Add(name, c.name, run, fmt.Sprintf("%.2f", c.calls), fmt.Sprintf("%.2f", c.usec), fmt.Sprintf("%.2f", c.perRun))
			name = ""
		}
		if bd.inside > 0 {
			t.Add(name, "script overhead", "", "", fmt.Sprintf("%.2f", bd.overhead), "")
			name = ""
		}
		t.Add(name, "**Redis µs per "+unit+"**", "", "", fmt.Sprintf("**%.2f**", bd.total), "")
	}
	if len(bds) >= 2 {
		lib, base := bds[0], bds[1]
		t.Outro = fmt.Sprintf("Round %d. The library's commands alone cost %.2f µs per %s, %s the baseline's %.2f µs; its script overhead adds %.2f µs.",
			k+1, lib.total-lib.overhead, unit, harness.Times(harness.Div(lib.total-lib.overhead, base.total)), base.total, lib.overhead)
	}
	return t
}

// times formats a ratio as "1.02×", or "0.004×" below 0.1.
func times(x float64) string {
	if x != 0 && x < 0.1 {
		return fmt.Sprintf("%.3f×", x)
	}
	return harness.Times(x)
}
