package main

import (
	"context"
	"slices"
	"testing"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/bench/internal/harness/harnesstest"
)

func TestMain(m *testing.M) { harnesstest.Main(m) }

// tinyRun runs every scenario in a configuration small enough for a test,
// against a redis-server the test starts, and returns the report.
func tinyRun(t *testing.T) string {
	t.Helper()
	o := harnesstest.SmokeOptions(t)
	o.MaxOps = 50_000
	b := &bench{settings: defaultSettings()}
	b.contenders = 80
	b.keys = 300
	b.handoffs = 20
	report, err := harness.Run(context.Background(), "slotbench", o, b, harnesstest.Writer{T: t})
	if err != nil {
		t.Fatal(err)
	}
	return string(report)
}

// TestReportHasEveryTable keeps the benchmark from rotting: a tiny run
// must produce every table, every target, and a number in each target's
// row.
func TestReportHasEveryTable(t *testing.T) {
	report := tinyRun(t)
	sections := harnesstest.Sections(report)
	harnesstest.CheckTables(t, sections, []string{
		"Targets",
		"Other budgets",
		"Hand-off latency",
		"1. No contention",
		"Redis time per script call",
		"2. Contention",
		"3. Many keys",
		"Memory",
		"Batch: a burst of 100 holders",
		"Allocations per call",
	})
	targets := harnesstest.TableRows(sections["Targets"])
	harnesstest.CheckTargets(t, "Targets", targets)
	for _, r := range targets {
		if len(r) > 3 && !harnesstest.Number.MatchString(r[3]) {
			t.Errorf("Targets: %q has no ratio: %q", r[0], r[3])
		}
	}
	var names []string
	for _, r := range targets {
		names = append(names, r[0])
	}
	want := []string{
		"Redis µs per TryAcquire+Release pair / classic scripts' pair",
		"pairs/s / raw INCR+DECR pairs/s, 4 callers",
		"Redis µs per refusal at a full key / classic refusal",
		"memory, 60 holders",
		"allocations per TryAcquire / go-redis EvalSha",
		"hand-off latency p50 / PING round trip p50",
		"share of the limit inside the guarded section, 80 workers, limit 60, 20 ms holds",
		"commands sent per waited acquire, release included",
	}
	if !slices.Equal(names, want) {
		t.Errorf("targets:\n%q\nwant:\n%q", names, want)
	}
	harnesstest.CheckTargets(t, "Other budgets", harnesstest.TableRows(sections["Other budgets"]))
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}
