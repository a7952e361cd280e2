package main

import (
	"fmt"
	"path/filepath"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// The targets the adaptive limit is held to, in each phase, and against
// the static limit in the same run.
const (
	bandLow, bandHigh = 0.75, 1.25 // the mean limit, over the capacity
	maxDropRate       = 0.05       // drops over calls
	minGoodput        = 0.70       // successes a second, over the ideal
	dropsVsStatic     = 0.5        // the drop rate at the lowest capacity, at most this times the static limit's
	goodputVsStatic   = 1.2        // goodput at the highest capacity, at least this times the static limit's
)

// Report implements harness.Suite.
func (b *bench) Report(rep *harness.Report) {
	if b.queue {
		b.queueReport(rep)
		return
	}
	rep.Title = "slotlimit adaptive benchmarks"
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("A simulated system serves at most %s concurrent calls in turn, %v each phase; a call takes %v, and one that finds the system full fails after %v.",
			b.capacities.String(), b.phase, b.callTime, b.timeout),
		fmt.Sprintf("%d callers call it without pause, over %d instances, each with a go-redis client of its own; each reports Success when served and Dropped when turned away.", b.callers, b.instances),
		fmt.Sprintf("Variants, all at once, each with a system and callers of its own: %s (one adaptive.Limiter per instance on one key: Min %d, Max %d, Initial %d, default Window, Step and Factor); %s (slotlimit.Limiter, limit %d); %s (the same algorithm kept in each instance's memory, each Min %d, Max %d, Initial %d).",
			nameAdaptive, limitMin, limitMax, limitInitial, nameStatic, b.static, namePerInstance, limitMin, limitMax, limitInitial),
		fmt.Sprintf("The machine was shared and busy: load average %s before the run and %s after it.", b.load[0], b.load[1]),
	)
	if b.svgPath != "" {
		name := filepath.Base(b.svgPath)
		rep.Notes = append(rep.Notes, fmt.Sprintf("The plot, %s: the limit (summed over the instances for %s) and the calls in flight against the capacity, sampled every %v.",
			name, namePerInstance, b.sample), fmt.Sprintf("![The limit and the calls in flight of each variant against the capacity](%s)", name))
	}
	rep.Add(harness.TargetTable("Targets",
		fmt.Sprintf("In each phase, the adaptive limit's mean within %.2f–%.2f× the capacity, drops at most %.0f%% of calls and goodput at least %.0f%% of the ideal (capacity / call time); against the static limit in the same run, at most %.1f× its drop rate at the lowest capacity and at least %.1f× its goodput at the highest.",
			bandLow, bandHigh, maxDropRate*100, minGoodput*100, dropsVsStatic, goodputVsStatic),
		b.targets()))
	t := harness.Table{
		Title: "Phases",
		Intro: "Per phase: the mean limit and calls in flight over the samples; successes a second (goodput), and as a fraction of the ideal; drops a second, and as a fraction of the calls.",
		Head:  []string{"variant", "capacity", "mean limit", "mean in flight", "successes/s", "of ideal", "drops/s", "drop rate"},
	}
	for _, r := range b.runs {
		for _, p := range r.phases {
			t.Add(r.name, fmt.Sprint(p.capacity), fmt.Sprintf("%.1f", p.meanLimit()), fmt.Sprintf("%.1f", p.meanCalling()),
				harness.Count(p.goodput()), fmt.Sprintf("%.2f", p.goodput()/p.ideal(b.callTime)),
				harness.Count(float64(p.drops)/p.length.Seconds()), fmt.Sprintf("%.2f%%", 100*p.dropRate()))
		}
	}
	if s := b.runOf(nameStatic); s != nil {
		for _, p := range s.phases {
			if p.capacity == b.static {
				t.Outro = fmt.Sprintf("A limit shared through Redis holds each slot for a round trip or two beyond the call, so its calls in flight stay below its limit, the more so on a busy machine: the static limit of %d, at a capacity of %d, its best case, reached %.2f of the ideal in this run. The per-instance limits, in memory, pay no round trip, and exceed the capacity together.",
					b.static, p.capacity, p.goodput()/p.ideal(b.callTime))
			}
		}
	}
	rep.Add(t)
}

// runOf returns the run of the variant name, or nil.
func (b *bench) runOf(name string) *run {
	for i := range b.runs {
		if b.runs[i].name == name {
			return &b.runs[i]
		}
	}
	return nil
}

// targets returns the targets of the run.
func (b *bench) targets() []harness.Target {
	a, s := b.runOf(nameAdaptive), b.runOf(nameStatic)
	if a == nil || s == nil {
		return nil
	}
	var ts []harness.Target
	lowest, highest := 0, 0
	for i, p := range a.phases {
		c := float64(p.capacity)
		band := p.meanLimit() / c
		ts = append(ts, harness.Target{
			Name:     fmt.Sprintf("mean limit / capacity, capacity %d", p.capacity),
			Measured: fmt.Sprintf("%.1f vs %d", p.meanLimit(), p.capacity),
			Target:   fmt.Sprintf("%.2f–%.2f×", bandLow, bandHigh),
			Ratio:    harness.Times(band),
			Pass:     band >= bandLow && band <= bandHigh,
		}, harness.Target{
			Name:     fmt.Sprintf("drop rate, capacity %d", p.capacity),
			Measured: fmt.Sprintf("%s of %s calls", harness.Count(float64(p.drops)), harness.Count(float64(p.drops+p.successes))),
			Target:   fmt.Sprintf("≤ %.0f%%", maxDropRate*100),
			Ratio:    fmt.Sprintf("%.2f%%", 100*p.dropRate()),
			Pass:     p.dropRate() <= maxDropRate,
		}, harness.Target{
			Name:     fmt.Sprintf("goodput / ideal, capacity %d", p.capacity),
			Measured: fmt.Sprintf("%s vs %s successes/s", harness.Count(p.goodput()), harness.Count(p.ideal(b.callTime))),
			Target:   fmt.Sprintf("≥ %.2f×", minGoodput),
			Ratio:    harness.Times(p.goodput() / p.ideal(b.callTime)),
			Pass:     p.goodput() >= minGoodput*p.ideal(b.callTime),
		})
		if p.capacity < a.phases[lowest].capacity {
			lowest = i
		}
		if p.capacity > a.phases[highest].capacity {
			highest = i
		}
	}
	al, sl := a.phases[lowest], s.phases[lowest]
	ah, sh := a.phases[highest], s.phases[highest]
	drops := harness.Div(al.dropRate(), sl.dropRate())
	goodput := harness.Div(ah.goodput(), sh.goodput())
	return append(ts, harness.Target{
		Name:     fmt.Sprintf("drop rate / static %d's, capacity %d", b.static, al.capacity),
		Measured: fmt.Sprintf("%.2f%% vs %.2f%%", 100*al.dropRate(), 100*sl.dropRate()),
		Target:   fmt.Sprintf("≤ %.2f×", dropsVsStatic),
		Ratio:    harness.Times(drops),
		Pass:     al.dropRate() <= dropsVsStatic*sl.dropRate(),
	}, harness.Target{
		Name:     fmt.Sprintf("goodput / static %d's, capacity %d", b.static, ah.capacity),
		Measured: fmt.Sprintf("%s vs %s successes/s", harness.Count(ah.goodput()), harness.Count(sh.goodput())),
		Target:   fmt.Sprintf("≥ %.2f×", goodputVsStatic),
		Ratio:    harness.Times(goodput),
		Pass:     ah.goodput() >= goodputVsStatic*sh.goodput(),
	})
}
