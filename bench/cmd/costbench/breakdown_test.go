package main

import (
	"math"
	"testing"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// A breakdown splits a command the client sent from the calls a script
// ran, and counts every call of a script as the client's, even one sent
// before the phase's count began; the overhead is the scripts' time less
// that of the commands they ran.
func TestBreakdownSplitsSentFromInside(t *testing.T) {
	bd := breakdownOf(harness.Phase{
		Ops:      100,
		Elapsed:  time.Second,
		TopLevel: map[string]int64{"evalsha": 99, "set": 100, "hello": 1},
		Server: harness.Stats{
			"evalsha": {Calls: 100, Usec: 1000}, // one sent before the hook's count began
			"set":     {Calls: 150, Usec: 300},  // 100 sent, 50 run by the script
			"get":     {Calls: 100, Usec: 100},
			"hello":   {Calls: 1, Usec: 4},
			"info":    {Calls: 1, Usec: 50}, // the harness's own
		},
	})
	// sent: evalsha 1000, set 200, hello 4; inside: set 100, get 100.
	if !near(bd.total, 12.04) || !near(bd.inside, 2) || !near(bd.overhead, 8) {
		t.Fatalf("total %v, inside %v, overhead %v; want 12.04, 2, 8", bd.total, bd.inside, bd.overhead)
	}
	want := []cmdCost{
		{name: "evalsha", top: true, calls: 1, usec: 10, perRun: 10},
		{name: "set", top: true, calls: 1, usec: 2, perRun: 2},
		{name: "hello", top: true, calls: 0.01, usec: 0.04, perRun: 4},
		{name: "get", calls: 1, usec: 1, perRun: 1},
		{name: "set", calls: 0.5, usec: 1, perRun: 2},
	}
	if len(bd.cmds) != len(want) {
		t.Fatalf("commands %+v, want %+v", bd.cmds, want)
	}
	for i, c := range bd.cmds {
		w := want[i]
		if c.name != w.name || c.top != w.top || !near(c.calls, w.calls) || !near(c.usec, w.usec) || !near(c.perRun, w.perRun) {
			t.Errorf("command %d: %+v, want %+v", i, c, w)
		}
	}
}

// A row's figures are those of the round whose ratio is the median of
// the rounds', so that a stall of the server in one round stays out of
// them, and both figures of its ratio come from that one round; a row
// held to a rate passes at or above its target, and p50 is the median of
// the rounds'.
func TestRowTakesTheRoundOfMedianRatio(t *testing.T) {
	round := func(usec int64, lat time.Duration) phase {
		return phase{Phase: harness.Phase{Ops: 10, Elapsed: time.Second, TopLevel: map[string]int64{"incr": 10}, Server: harness.Stats{"incr": {Calls: 10, Usec: usec}}}, p50: lat}
	}
	// Ratios by round: 500/100 = 5, 10/20 = 0.5, 30/20 = 1.5.
	lib := result{name: "lib", rounds: []phase{round(500, 3), round(10, 1), round(30, 2)}}
	base := result{name: "base", rounds: []phase{round(100, 0), round(20, 0), round(20, 0)}}
	x := row{lib: lib, base: base, unit: "call", op: "≤", target: 2}
	if k := x.chosen(); k != 2 {
		t.Fatalf("chosen round %d, want 2", k)
	}
	if got := x.ratio(); !near(got, 1.5) || !x.pass() {
		t.Errorf("ratio %v, pass %v; want 1.5, a pass", got, x.pass())
	}
	if got, want := x.measured(), "3.00 vs 2.00 µs per call"; got != want {
		t.Errorf("measured %q, want %q", got, want)
	}
	if all := lib.all(); !near(rate.value(all), 10) || all.p50 != 2 {
		t.Errorf("over every round: %v operations per second, p50 %v; want 10, 2", rate.value(all), all.p50)
	}
	if top := lib.top(); len(top) != 1 || top[0] != "incr" {
		t.Errorf("top-level commands %q", top)
	}
	if (row{lib: lib}).chosen() != -1 || (row{lib: lib}).pass() {
		t.Error("a row without a baseline passes")
	}
	x.metric, x.op, x.target = rate, "≥", 1
	if x.ratio() != 1 || !x.pass() {
		t.Errorf("equal rates: ratio %v, pass %v; want 1, a pass", x.ratio(), x.pass())
	}
}
