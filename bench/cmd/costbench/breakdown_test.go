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
	r := newResult("x", []harness.Phase{{
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
	}})
	bd := r.breakdown()
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

// A result's figures are its median round's, so that a stall of the
// server in one round stays out of them; its rate is over every round.
func TestResultIsItsMedianRound(t *testing.T) {
	round := func(usec int64) harness.Phase {
		return harness.Phase{Ops: 10, Elapsed: time.Second, TopLevel: map[string]int64{"incr": 10}, Server: harness.Stats{"incr": {Calls: 10, Usec: usec}}}
	}
	r := newResult("x", []harness.Phase{round(500), round(10), round(20)})
	if got := r.usecPerOp(); !near(got, 2) {
		t.Errorf("Redis µs per operation %v, want the median round's 2", got)
	}
	if got := r.opsPerSecond(); !near(got, 10) {
		t.Errorf("operations per second %v, want 10 over the three rounds", got)
	}
	if len(r.top) != 1 || r.top[0] != "incr" {
		t.Errorf("top-level commands %q", r.top)
	}
}
