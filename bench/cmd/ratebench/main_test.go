package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/bench/internal/harness/harnesstest"
)

func TestMain(m *testing.M) { harnesstest.Main(m) }

// TestReportHasEveryTable keeps the benchmark from rotting: a tiny run,
// against a redis-server the test starts, must produce every table, every
// target, a number in each target's row, and every variant, the classic
// first, each with the mix of outcomes its keys make.
func TestReportHasEveryTable(t *testing.T) {
	o := harnesstest.SmokeOptions(t)
	b := &bench{settings: defaultSettings()}
	b.rate, b.callsPerKey, b.allocRuns = 3, 4, 50
	out, err := harness.Run(context.Background(), "ratebench", o, b, harnesstest.Writer{T: t})
	if err != nil {
		t.Fatal(err)
	}
	report := string(out)

	sections := harnesstest.Sections(report)
	harnesstest.CheckTables(t, sections, []string{
		"Targets",
		"Allow: 4 workers, many keys",
		"Allocations per call",
	})
	targets := harnesstest.TableRows(sections["Targets"])
	harnesstest.CheckTargets(t, "Targets", targets)
	var names []string
	for _, r := range targets {
		names = append(names, r[0])
		if !harnesstest.Number.MatchString(r[3]) {
			t.Errorf("Targets: %q has no ratio: %q", r[0], r[3])
		}
	}
	want := []string{
		"library overhead, FixedWindow: Allow calls/s / bare EVALSHA of its script, 4 workers",
		"library overhead, GCRA: Allow calls/s / bare EVALSHA of its script, 4 workers",
		"Redis µs per Allow, FixedWindow / classic script",
		"Redis µs per Allow, GCRA / classic script",
		"Redis µs per Allow, GCRA / redis_rate's Allow",
	}
	if !slices.Equal(names, want) {
		t.Errorf("targets:\n%q\nwant:\n%q", names, want)
	}

	// Of each key's 4 calls, 3 are allowed; a phase may end inside a key.
	var variants []string
	for _, r := range harnesstest.TableRows(sections["Allow: 4 workers, many keys"]) {
		variants = append(variants, r[0])
		if !harnesstest.Number.MatchString(r[1]) || !harnesstest.Number.MatchString(r[4]) {
			t.Errorf("variant %q has no calls/s or Redis µs: %q", r[0], r)
		}
		if !strings.HasPrefix(r[3], "7") {
			t.Errorf("variant %q allowed %s of its calls, want about 75%%", r[0], r[3])
		}
	}
	if want := []string{nameSeed, nameBareWindow, nameWindow, nameBareGCRA, nameGCRA, nameRedisRate}; !slices.Equal(variants, want) {
		t.Errorf("variants:\n%q\nwant:\n%q", variants, want)
	}
	if !strings.Contains(report, "75.0% allowed, one call in 4 on a new key") {
		t.Error("the report does not say the mix of its keys")
	}
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}
