package main

import (
	"github.com/slotlimit/slotlimit/bench/internal/baseline"
	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// scripts are the scripts the benchmark runs by EVALSHA itself.
type scripts struct {
	leaseAcquire, leaseRelease, cad, window, grab, recentAdd harness.Script
}

func newScripts() scripts {
	return scripts{
		leaseAcquire: harness.NewScript(baseline.LeaseAcquire),
		leaseRelease: harness.NewScript(baseline.LeaseRelease),
		cad:          harness.NewScript(baseline.CompareAndDelete),
		window:       harness.NewScript(baseline.ClassicWindow),
		grab:         harness.NewScript(baseline.ClassicGrab),
		recentAdd:    harness.NewScript(baseline.ClassicRecent),
	}
}

func (s scripts) all() []harness.Script {
	return []harness.Script{s.leaseAcquire, s.leaseRelease, s.cad, s.window, s.grab, s.recentAdd}
}
