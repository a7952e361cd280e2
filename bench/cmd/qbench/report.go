package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// Target figures that no flag changes.
const (
	targetP99  = 20 * time.Millisecond // the package's p99 due-to-delivery latency
	targetCost = 1.0                   // Redis µs per message, over asynq's
)

// Shorthands for the report's cells.
var (
	count = harness.Count
	times = harness.Times
)

func f2(x float64) string { return fmt.Sprintf("%.2f", x) }

// millis formats d in ms with one decimal, keeping its sign.
func millis(d time.Duration) string {
	return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))
}

func (r results) triple(name string) tripleResult {
	for _, t := range r.triples {
		if t.name == name {
			return t
		}
	}
	return tripleResult{}
}

func (r results) latency(name string) latencyResult {
	for _, l := range r.latencies {
		if l.name == name {
			return l
		}
	}
	return latencyResult{}
}

// targets returns the rows of the targets table.
func (b *bench) targets() []harness.Target {
	r := b.results
	l := r.latency(nameQueueRun)
	q := l.latency.Quantiles(0.50, 0.99)
	all := l.delivered == b.tasks
	measured := fmt.Sprintf("%s ms (p50 %s ms), %s of %s tasks delivered", millis(q[1]), millis(q[0]), count(float64(l.delivered)), count(float64(b.tasks)))
	ours, theirs := r.triple(nameQueue).usecPerMessage(), r.triple(nameAsynq).usecPerMessage()
	return []harness.Target{{
		Name:     fmt.Sprintf("p99 due-to-delivery, Push + Run, %s tasks due in %v, %d workers", count(float64(b.tasks)), b.due, b.consumers),
		Measured: measured,
		Target:   "≤ 20 ms",
		Ratio:    times(float64(q[1]) / float64(targetP99)),
		Pass:     all && l.latency.Len() > 0 && q[1] <= targetP99,
	}, {
		Name:     "Redis µs per message, Push + Poll + Ack / asynq's",
		Measured: fmt.Sprintf("%s vs %s µs", f2(ours), f2(theirs)),
		Target:   "≤ 1.0×",
		Ratio:    times(harness.Div(ours, theirs)),
		Pass:     theirs > 0 && ours > 0 && ours <= targetCost*theirs,
	}}
}

// Report implements harness.Suite.
func (b *bench) Report(rep *harness.Report) {
	r := b.results
	rep.Title = "slotlimit delayqueue benchmarks"
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("Run: %s; each triple phase %v and at most %s messages, %d rounds, the variants taking turns; each latency phase at most %v; one go-redis client with a pool of %d connections for every variant, asynq's included.",
			rep.Machine.Date, b.Duration, count(float64(b.MaxOps)), b.Rounds, b.latencyTimeout, b.Pool),
		fmt.Sprintf("Peers: %s %s, on %s %s.", modAsynq, harness.ModuleVersion(modAsynq), modGoRedis, harness.ModuleVersion(modGoRedis)),
		fmt.Sprintf("These figures are ratios within one run on a shared, noisy %d-core machine where Redis, the load and its goroutines share the cores. Absolute numbers move from run to run; compare rows of the same run, which is what the targets do.", rep.Machine.CPUs),
	)

	rep.Add(harness.TargetTable("Targets",
		fmt.Sprintf("The latency target is held on an idle machine; this one runs Redis, %d producers and every consumer on its %d cores. Redis µs per message is the server time (INFO commandstats usec) of every top-level command the variant's client sent over its triple phases, per message taken (see the next table).", b.producers, rep.Machine.CPUs),
		b.targets()))

	t := harness.Table{
		Title: fmt.Sprintf("Push, poll and ack: %d producers, %d consumers", b.producers, b.consumers),
		Intro: fmt.Sprintf("Producers push messages due at once, never more than %d ahead of the consumers, until the phase's time or count runs out; the phase then ends when every message pushed is taken. A triple is a message pushed, taken and acked: the package's Push, Poll and Ack; for the classic script, a ZADD and the poll script that removes the message (the classic script has no ack; its consumer sleeps 10 ms after every poll, as the classic does); for asynq, Client.Enqueue and its Server of %d workers, which dequeues the task and marks it done, with its heartbeats and other background work in the same client. Redis µs per message is the server time of every top-level command listed (a script's time includes the commands it runs); commands sent and round trips count the load client's; commands Redis ran count those inside scripts too. The package's and the classic commands are checked against those their client sent in every phase.", b.backlog, b.consumers),
		Head:  []string{"variant", "messages", "triples/s", "Redis µs per message", "Redis µs / asynq's", "top-level commands", "commands sent per message", "round trips per message", "commands Redis ran per message", "commands its scripts ran, per message"},
	}
	asynqUsec := r.triple(nameAsynq).usecPerMessage()
	for _, x := range r.triples {
		t.Add(x.name, count(float64(x.Ops)), count(x.Rate(x.Ops)), f2(x.usecPerMessage()), times(harness.Div(x.usecPerMessage(), asynqUsec)),
			strings.Join(x.commands, ", "), f2(harness.Ratio(x.Sent, x.Ops)), f2(harness.Ratio(x.Trips, x.Ops)), f2(harness.Ratio(x.Server.Commands(), x.Ops)), x.Server.Nested(x.Ops, x.commands...))
	}
	rep.Add(t)

	t = harness.Table{
		Title: fmt.Sprintf("Due-to-delivery latency: %s tasks due in %v, %d workers", count(float64(b.tasks)), b.due, b.consumers),
		Intro: fmt.Sprintf("%d producers push the tasks as fast as they go, each due %v after its push began by the pusher's clock; a task's latency is the time its handler begins less that due time, on the same machine's clock, for its first delivery. A negative latency is a task delivered before it was due: the classic script and asynq score due times in whole seconds, truncated, and take a task once the current second reaches its due second. The package runs Run with %d workers; the classic script %d consumers, each polling every 10 ms; asynq a Server of Concurrency %d, with its defaults (forwarder every 5 s, TaskCheckInterval 1 s) and with its forwarder (DelayedTaskCheckInterval) at %v. Each phase ends when every task is delivered, or after %v.", b.producers, b.due, b.consumers, b.consumers, b.consumers, b.due, b.latencyTimeout),
		Head:  []string{"variant", "delivered", "min (ms)", "p50 (ms)", "p99 (ms)", "max (ms)", "early", "pushes took (ms)", "repeats"},
	}
	for _, l := range r.latencies {
		q := l.latency.Quantiles(0, 0.50, 0.99, 1)
		t.Add(l.name, fmt.Sprintf("%s of %s", count(float64(l.delivered)), count(float64(b.tasks))),
			millis(q[0]), millis(q[1]), millis(q[2]), millis(q[3]), count(float64(l.latency.Below(0))), millis(l.pushSpan), count(float64(l.repeats)))
	}
	rep.Add(t)
}
