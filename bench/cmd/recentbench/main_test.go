package main

import (
	"context"
	"slices"
	"testing"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/bench/internal/harness/harnesstest"
)

func TestMain(m *testing.M) { harnesstest.Main(m) }

// TestReportHasEveryTable keeps the benchmark from rotting: a tiny run,
// against a redis-server the test starts, must produce every table, every
// target, a number in each target's row, and every variant, the classic
// first, in the Add and the memory tables.
func TestReportHasEveryTable(t *testing.T) {
	o := harnesstest.SmokeOptions(t)
	b := &bench{settings: defaultSettings()}
	b.max, b.users = 5, 3
	out, err := harness.Run(context.Background(), "recentbench", o, b, harnesstest.Writer{T: t})
	if err != nil {
		t.Fatal(err)
	}
	report := string(out)

	sections := harnesstest.Sections(report)
	harnesstest.CheckTables(t, sections, []string{
		"Targets",
		"Add: 4 workers, many keys",
		"Memory per list of 5 items",
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
		"Redis µs per Add / classic script, 4 workers, many keys",
		"memory per list of 5 items / classic list",
	}
	if !slices.Equal(names, want) {
		t.Errorf("targets:\n%q\nwant:\n%q", names, want)
	}

	variants := []string{nameSeed, nameList, nameLPush}
	for _, table := range []struct {
		title   string
		numbers []int // the cells that must hold a number
	}{
		{"Add: 4 workers, many keys", []int{1, 4}},
		{"Memory per list of 5 items", []int{1, 3}},
	} {
		var got []string
		for _, r := range harnesstest.TableRows(sections[table.title]) {
			got = append(got, r[0])
			for _, i := range table.numbers {
				if !harnesstest.Number.MatchString(r[i]) {
					t.Errorf("%s: %q has no number in column %d: %q", table.title, r[0], i, r)
				}
			}
		}
		if !slices.Equal(got, variants) {
			t.Errorf("%s: variants:\n%q\nwant:\n%q", table.title, got, variants)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}
