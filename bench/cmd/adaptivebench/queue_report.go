package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// The targets of -queue, in each phase: the latency variant's p99 against
// the no-load latency (-call), its goodput against the drop-only limit's,
// and the drop-only and per-instance variants against it.
const (
	maxP99OverNoLoad   = 3.0
	goodputVsDropsOnly = 0.85
)

// queueReport is Report for -queue.
func (b *bench) queueReport(rep *harness.Report) {
	rep.Title = "slotlimit adaptive benchmarks: a queueing system"
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("A simulated system has %s servers in turn, %v each phase, each serving one call at a time for %v (the no-load latency), behind a FIFO queue that takes every call; a caller gives up after %v, which counts as a drop.",
			b.capacities.String(), b.phase, b.callTime, b.callerTimeout),
		fmt.Sprintf("%d callers call it without pause, over %d instances, each with a go-redis client of its own; each reports Success when served and Dropped when it gave up.", b.callers, b.instances),
		fmt.Sprintf("Variants, all at once, each with a system and callers of its own: %s (one adaptive.Limiter per instance on one key: Min %d, Max %d, Initial %d, RTTTolerance %g, default Window, Step and Factor); %s (the same with RTTTolerance 0: drops alone move it); %s (slotlimit.Limiter, limit %d); %s (the same latency rule kept in each instance's memory, fed by its own calls, each Min %d, Max %d, Initial %d).",
			nameLatency, limitMin, limitMax, limitInitial, b.tolerance, nameDropsOnly, nameStatic, b.static, namePerInstance, limitMin, limitMax, limitInitial),
		"Latency is a call's to the system, from the call to its answer or its caller giving up, on the local clock, counted in the phase the call was made in; it leaves out the wait for a slot, which no limit shortens: with every caller busy, a caller's turn comes round at the rate the system serves. Successes and drops count in the phase they end in.",
		fmt.Sprintf("The machine was shared and busy: load average %s before the run and %s after it.", b.load[0], b.load[1]),
	)
	if b.svgPath != "" {
		name := filepath.Base(b.svgPath)
		rep.Notes = append(rep.Notes, fmt.Sprintf("The plot, %s: the limit (summed over the instances for %s), the calls in flight and the mean latency of the calls that ended, against the capacity, sampled every %v.",
			name, namePerInstance, b.sample), fmt.Sprintf("![The limit, the calls in flight and the latency of each variant against the capacity](%s)", name))
	}
	rep.Add(harness.TargetTable("Targets",
		fmt.Sprintf("In each phase: %s's p99 latency at most %.0f× the no-load latency (%v); its goodput at least %.2f× %s's; %s's p99 above %s's; and %s's p99 above %s's or its goodput below it.",
			nameLatency, maxP99OverNoLoad, b.callTime, goodputVsDropsOnly, nameDropsOnly, nameDropsOnly, nameLatency, namePerInstance, nameLatency),
		b.queueTargets()))
	t := harness.Table{
		Title: "Phases",
		Intro: "Per phase: the mean limit and calls in flight (queued or served) over the samples; successes a second (goodput), and as a fraction of the ideal (servers / call time); the drop rate (callers that gave up); and the p50 and p99 latency of the calls to the system.",
		Head:  []string{"variant", "capacity", "mean limit", "mean in flight", "successes/s", "of ideal", "drop rate", "p50", "p99"},
	}
	for _, r := range b.runs {
		for _, p := range r.phases {
			t.Add(r.name, fmt.Sprint(p.capacity), fmt.Sprintf("%.1f", p.meanLimit()), fmt.Sprintf("%.1f", p.meanCalling()),
				harness.Count(p.goodput()), fmt.Sprintf("%.2f", p.goodput()/p.ideal(b.callTime)),
				fmt.Sprintf("%.2f%%", 100*p.dropRate()), ms(p.p50), ms(p.p99))
		}
	}
	rep.Add(t)
}

// ms formats d in ms, as "12.3ms".
func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }

// queueTargets returns the targets of a -queue run.
func (b *bench) queueTargets() []harness.Target {
	l, d, p := b.runOf(nameLatency), b.runOf(nameDropsOnly), b.runOf(namePerInstance)
	if l == nil || d == nil || p == nil {
		return nil
	}
	var ts []harness.Target
	for i, lp := range l.phases {
		dp, pp := d.phases[i], p.phases[i]
		c := lp.capacity
		ts = append(ts, harness.Target{
			Name:     fmt.Sprintf("%s p99 / no-load latency, capacity %d", nameLatency, c),
			Measured: fmt.Sprintf("%s vs %s", ms(lp.p99), ms(b.callTime)),
			Target:   fmt.Sprintf("≤ %.0f×", maxP99OverNoLoad),
			Ratio:    harness.Times(float64(lp.p99) / float64(b.callTime)),
			Pass:     lp.p99 > 0 && float64(lp.p99) <= maxP99OverNoLoad*float64(b.callTime),
		}, harness.Target{
			Name:     fmt.Sprintf("%s goodput / %s's, capacity %d", nameLatency, nameDropsOnly, c),
			Measured: fmt.Sprintf("%s vs %s successes/s", harness.Count(lp.goodput()), harness.Count(dp.goodput())),
			Target:   fmt.Sprintf("≥ %.2f×", goodputVsDropsOnly),
			Ratio:    harness.Times(harness.Div(lp.goodput(), dp.goodput())),
			Pass:     lp.goodput() >= goodputVsDropsOnly*dp.goodput(),
		}, harness.Target{
			Name:     fmt.Sprintf("%s p99 / %s's, capacity %d", nameDropsOnly, nameLatency, c),
			Measured: fmt.Sprintf("%s vs %s", ms(dp.p99), ms(lp.p99)),
			Target:   "> 1×",
			Ratio:    harness.Times(harness.Div(float64(dp.p99), float64(lp.p99))),
			Pass:     dp.p99 > lp.p99,
		}, harness.Target{
			Name: fmt.Sprintf("%s p99 / %s's, or goodput / %s's, capacity %d", namePerInstance, nameLatency, nameLatency, c),
			Measured: fmt.Sprintf("%s vs %s; %s vs %s successes/s", ms(pp.p99), ms(lp.p99),
				harness.Count(pp.goodput()), harness.Count(lp.goodput())),
			Target: "p99 > 1× or goodput < 1×",
			Ratio: fmt.Sprintf("%s; %s", harness.Times(harness.Div(float64(pp.p99), float64(lp.p99))),
				harness.Times(harness.Div(pp.goodput(), lp.goodput()))),
			Pass: pp.p99 > lp.p99 || pp.goodput() < lp.goodput(),
		})
	}
	return ts
}
