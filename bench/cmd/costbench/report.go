package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/bench/internal/lockpairs"
)

// A row is one line of the table: the library's variant against its
// baseline, the ratio of the two, and the target the ratio is held to.
type row struct {
	name     string // as the issue names it
	short    string // the breakdown's title
	baseline string // what the library is compared with
	unit     string // the operation: "pair", "call", "task"
	lib      result
	base     result
	peers    []result // shown beside the baseline, not held to a target
	rate     bool     // compare operations per second, not Redis µs per operation
	target   float64  // the ratio the row is held to: at most, or at least for a rate
}

// rounds returns the number of rounds both the library and its baseline
// ran.
func (r row) rounds() int {
	return min(len(r.lib.rounds), len(r.base.rounds))
}

// ratioIn returns the library's figure over the baseline's in round i.
func (r row) ratioIn(i int) float64 {
	if r.rate {
		return harness.Div(opsPerSecond(r.lib.round(i)), opsPerSecond(r.base.round(i)))
	}
	return harness.Div(usecPerOp(r.lib.round(i)), usecPerOp(r.base.round(i)))
}

// chosen returns the round whose ratio is the median of the rounds'
// ratios (the lower of the two middle ones for an even number), whose
// figures the report gives: the variants of a row take turns in every
// round, so that the two figures of a ratio come from phases side by
// side, and the median keeps a stall of the shared machine in one round
// out of the table.
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
	if x == 0 {
		return false
	}
	if r.rate {
		return x >= r.target
	}
	return x <= r.target
}

func (r row) targetText() string {
	if r.rate {
		return fmt.Sprintf("≥ %.2f×", r.target)
	}
	return fmt.Sprintf("≤ %.1f×", r.target)
}

// measured says the two figures the ratio divides, and the peers', in the
// chosen round.
func (r row) measured() string {
	k := r.chosen()
	lib, base := r.lib.round(k), r.base.round(k)
	if r.rate {
		return fmt.Sprintf("%s vs %s %ss/s", harness.Count(opsPerSecond(lib)), harness.Count(opsPerSecond(base)), r.unit)
	}
	s := fmt.Sprintf("%.2f vs %.2f µs per %s", usecPerOp(lib), usecPerOp(base), r.unit)
	for _, p := range r.peers {
		peer := p.round(k)
		s += fmt.Sprintf("; %s %.2f µs (%s)", p.name, usecPerOp(peer), harness.Times(harness.Div(usecPerOp(lib), usecPerOp(peer))))
	}
	return s
}

// rows returns the table's rows, in the order. A row whose
// results are missing, as when a step failed, has zero results.
func (b *bench) rows() []row {
	at := func(rs []result, i int) result {
		if i < len(rs) {
			return rs[i]
		}
		return result{}
	}
	lockPeers := func() []result {
		if len(b.lock) < 4 {
			return nil
		}
		p := slices.Clone(b.lock[2:4])
		p[0].name, p[1].name = "bsm/redislock", "go-redsync/redsync"
		return p
	}
	return []row{
		{name: "limiter TryAcquire+Release (Redis µs per pair)", short: "limiter TryAcquire+Release", baseline: "a minimal ZSET lease script pair: acquire = prune (ZREMRANGEBYSCORE), ZCARD, ZADD, PEXPIRE; release = ZREM", unit: "pair", lib: at(b.limiter, 0), base: at(b.limiter, 1), target: 1.5},
		{name: fmt.Sprintf("limiter pairs/s (%d workers)", b.Workers), baseline: "raw INCR+DECR pairs/s", unit: "pair", lib: at(b.limiter, 0), base: at(b.limiter, 2), rate: true, target: 0.80},
		{name: "lock TryLock+Unlock", short: "lock TryLock+Unlock", baseline: "SET NX PX + compare-and-delete script (bsm/redislock and go-redsync/redsync shown, the ratio to each in brackets)", unit: "pair", lib: at(b.lock, 0), base: at(b.lock, 1), peers: lockPeers(), target: 1.3},
		{name: "ratelimit GCRA Allow", short: "ratelimit GCRA Allow", baseline: "go-redis/redis_rate (the same limit and period)", unit: "Allow", lib: at(b.gcra, 0), base: at(b.gcra, 1), target: 1.0},
		{name: "ratelimit fixed window Allow", short: "ratelimit fixed window Allow", baseline: "the classic INCR + EXPIRE-on-first-hit script", unit: "Allow", lib: at(b.window, 0), base: at(b.window, 1), target: 2.0},
		{name: "redpacket Grab", short: "redpacket Grab", baseline: "the classic HGET/HSET/RPUSH grab script", unit: "Grab", lib: at(b.grab, 0), base: at(b.grab, 1), target: 2.0},
		{name: "recent Add", short: "recent Add", baseline: "the classic ZADD/ZCARD/ZREMRANGEBYRANK script", unit: "Add", lib: at(b.recent, 0), base: at(b.recent, 1), target: 1.8},
		{name: "delayqueue, per task pushed, delivered and acked", short: "delayqueue Push + Run", baseline: "hibiken/asynq with its forwarder at 100 ms", unit: "task", lib: at(b.queue, 0), base: at(b.queue, 1), target: 1.0},
	}
}

// costHead is the head of the table of ratios.
var costHead = []string{"row", "baseline", "measured", "target", "ratio", "result"}

// Report implements harness.Suite.
func (b *bench) Report(r *harness.Report) {
	r.Title = "slotlimit benchmarks: the Redis cost of every primitive"
	r.Notes = []string{
		fmt.Sprintf("Run: %s; %d workers; each phase %v and at most %s operations, %d rounds, the variants of a row taking turns in every round; every variant on one go-redis client with the default options (the delay queue's two on a client each).",
			r.Machine.Date, b.Workers, b.Duration, harness.Count(float64(b.MaxOps)), b.Rounds),
		fmt.Sprintf("Peers: %s %s, %s %s, %s %s, %s %s, on %s %s.",
			modRedislock, harness.ModuleVersion(modRedislock), modRedsync, harness.ModuleVersion(modRedsync),
			modRedisRate, harness.ModuleVersion(modRedisRate), modAsynq, harness.ModuleVersion(modAsynq),
			modGoRedis, harness.ModuleVersion(modGoRedis)),
		"These figures are ratios within one run on a shared, noisy 2-core machine where Redis, the load and its goroutines share the cores. Absolute numbers move from run to run; compare rows of the same run, which is what the targets do.",
	}
	rows := b.rows()

	t := harness.Table{
		Title: "Targets",
		Intro: "Each row is the library's call, made through its public API as a user makes it, against a baseline measured in this run. " +
			"Redis µs per operation is the server time (INFO commandstats usec, CONFIG RESETSTAT before every phase) of the top-level commands the variant's client sent, per operation: " +
			"a script's EVALSHA and an EXEC count the commands they run; pairs/s are operations completed per second. The variants of a row take turns in every round, and the ratio, the library's figure over the baseline's, is the median of the rounds' ratios: the figures are that round's.",
		Head: costHead,
	}
	for _, x := range rows {
		res := "PASS"
		if !x.pass() {
			res = "**FAIL**"
		}
		t.Add(x.name, x.baseline, x.measured(), x.targetText(), harness.Times(x.ratio()), res)
	}
	r.Add(t)
	r.Add(b.scenarios())
	for i, x := range rows {
		if i == 1 {
			continue // the limiter's pairs/s: the same phases as its Redis µs
		}
		k := x.chosen()
		variants := []named{{x.lib.name, x.lib.round(k)}, {x.base.name, x.base.round(k)}}
		if i == 0 {
			incr := rows[1].base // INCR+DECR, in the same round
			variants = append(variants, named{incr.name, incr.round(k)})
		}
		for _, p := range x.peers {
			variants = append(variants, named{p.name, p.round(k)})
		}
		t := breakdownTable(x.short, x.unit, k, variants)
		if i == 0 {
			t.Intro = breakdownIntro
		}
		r.Add(t)
	}
	r.Add(b.everyVariant(), reports())
}

// scenarios says what each row's phases ran.
func (b *bench) scenarios() harness.Table {
	t := harness.Table{Title: "What each row runs", Head: []string{"row", "load"}}
	t.Add("limiter", fmt.Sprintf("TryAcquire then Release, each worker a holder of its own, on one key of limit %d and leases of %v; the minimal lease scripts on a key of their own, scored by the client's clock in ms; INCR then DECR of one counter.", highLimit, leaseTTL))
	t.Add("lock", fmt.Sprintf("TryLock then Unlock, each worker on a key of its own, leases of %v; the bare SET NX PX with a random token, then the compare-and-delete script; redislock's Obtain with no retry, then Release; redsync's Mutex with one try, TryLockContext then UnlockContext, on its go-redis v9 pool of the same client.", lockpairs.TTL))
	t.Add("ratelimit", fmt.Sprintf("Allow of %d per hour (GCRA and redis_rate: burst %d), each worker calling each of its keys %d times in a row, then a key never used, so that every variant meets the same mix: of %d calls on a key, the first finds no key, %d are allowed and %d refused.",
		b.rate, b.rate, b.callsPerKey, b.callsPerKey, min(b.rate, b.callsPerKey), max(b.callsPerKey-b.rate, 0)))
	t.Add("redpacket", fmt.Sprintf("Grab of %d packets of %s shares each (Equal shares, as the classic unit amount), grabbed in order by users of their own, every grab taking a share; the classic packets as the classic script keeps them, a hash with its stock and a list of grabs.", b.packets, harness.Count(float64(b.shares))))
	t.Add("recent", fmt.Sprintf("Add of one value, 18 bytes, to lists of %d, each worker owning %d lists of each variant, filled to %d through the variant's own Add before the load, so that every Add adds one item and drops the oldest; the classic script scored by the client's clock in whole seconds.", b.recentMax, b.recentUsers, b.recentMax))
	t.Add("delayqueue", fmt.Sprintf("%d producers push tasks due at once, never more than %d ahead of the consumers; %d consumers take them: the package's Run, acking each as its handler returns; asynq's Server of Concurrency %d with DelayedTaskCheckInterval %v and every other setting at its default. A phase ends when every task pushed is taken. Each variant on a client of its own, whose every top-level command counts, its background work included (asynq's heartbeats and forwarder, the package's waiters).",
		b.Workers, b.backlog, b.Workers, b.Workers, asynqForward))
	return t
}

// breakdownIntro says how to read the breakdowns, above the first.
const breakdownIntro = "Under each row, every command the server ran per operation (INFO commandstats, in the round of the row's median ratio), for the library's call first, then its baseline: " +
	"\"sent\" are the top-level commands the client sent, whose time is the variant's Redis µs; \"inside\" are those a script or an EXEC ran, whose time is also part of that script's or EXEC's. " +
	"Script overhead is the time of the scripts and EXECs less that of the commands they ran: the Lua interpreter, the arguments, the reply. " +
	"A ratio's floor is what the library's commands cost, with no overhead, over what the baseline costs in all."

// A named phase is a variant's phase in one round.
type named struct {
	name string
	harness.Phase
}

// breakdownTable lists, for each variant in round k, every command the
// server ran per operation: those the client sent, and those run inside a
// script or EXEC, then the scripts' own overhead and the Redis µs per
// operation.
func breakdownTable(title, unit string, k int, variants []named) harness.Table {
	t := harness.Table{
		Title: "Breakdown: " + title + ", per " + unit,
		Outro: fmt.Sprintf("Round %d.", k+1),
		Head:  []string{"variant", "command", "run", "calls per " + unit, "µs per " + unit, "µs per command run"},
	}
	for _, v := range variants {
		bd := breakdownOf(v.Phase)
		name := v.name
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
	if len(variants) >= 2 {
		lib, base := breakdownOf(variants[0].Phase), breakdownOf(variants[1].Phase)
		t.Outro = fmt.Sprintf("Round %d. The library's commands alone cost %.2f µs per %s, %s the baseline's %.2f µs; its script overhead adds %.2f µs.",
			k+1, lib.total-lib.overhead, unit, harness.Times(harness.Div(lib.total-lib.overhead, base.total)), base.total, lib.overhead)
	}
	return t
}

// everyVariant lists every variant's load.
func (b *bench) everyVariant() harness.Table {
	t := harness.Table{
		Title: "Every variant",
		Intro: "Every figure is over every round, summed, where the table of targets gives the round of each row's median ratio. Commands sent count the client's, round trips its single commands and pipelines.",
		Head:  []string{"variant", "operations", "operations/s", "Redis µs per operation", "top-level commands", "commands sent per operation", "round trips per operation"},
	}
	for _, rs := range [][]result{b.limiter, b.lock, b.gcra, b.window, b.grab, b.recent, b.queue} {
		for _, r := range rs {
			t.Add(r.name, harness.Count(float64(r.all.Ops)), harness.Count(opsPerSecond(r.all)), fmt.Sprintf("%.2f", usecPerOp(r.all)),
				strings.Join(r.top, ", "), fmt.Sprintf("%.2f", harness.Ratio(r.all.Sent, r.all.Ops)), fmt.Sprintf("%.2f", harness.Ratio(r.all.Trips, r.all.Ops)))
		}
	}
	return t
}

// reports lists each package's own report, which this one's rows sum up.
func reports() harness.Table {
	t := harness.Table{
		Title: "Each package's own report",
		Intro: "Each package's command measures it in more ways (contention, latency, memory, allocations, the library's scripts by bare EVALSHA), against more baselines. From bench/:",
		Head:  []string{"package", "report", "command"},
	}
	for _, x := range [][3]string{
		{"slotlimit (Limiter)", "bench/limiter.md", "go run ./cmd/slotbench -o limiter.md"},
		{"lock", "lock/BENCHMARKS.md", "go run ./cmd/lockbench -o ../lock/BENCHMARKS.md"},
		{"ratelimit", "ratelimit/BENCHMARKS.md", "go run ./cmd/ratebench -o ../ratelimit/BENCHMARKS.md"},
		{"redpacket", "redpacket/BENCHMARKS.md", "go run ./cmd/packetbench -o ../redpacket/BENCHMARKS.md"},
		{"recent", "recent/BENCHMARKS.md", "go run ./cmd/recentbench -o ../recent/BENCHMARKS.md"},
		{"delayqueue", "delayqueue/BENCHMARKS.md", "go run ./cmd/qbench -o ../delayqueue/BENCHMARKS.md"},
		{"adaptive", "adaptive/BENCHMARKS.md", "go run ./cmd/adaptivebench -o ../adaptive/BENCHMARKS.md"},
	} {
		t.Add(x[0], "["+x[1]+"]("+x[1]+")", "`"+x[2]+"`")
	}
	return t
}
