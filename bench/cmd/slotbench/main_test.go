package main

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slotlimit/slotlimit/bench/harness"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.Shutdown()
	os.Exit(code)
}

// tinyRun runs every scenario in a configuration small enough for a test,
// against a redis-server the test starts, and returns the report.
func tinyRun(t *testing.T) string {
	t.Helper()
	o := harness.DefaultOptions()
	o.Addr = redistest.Addr(t)
	o.Duration = 100 * time.Millisecond
	o.Workers = 4
	o.Pool = 32
	o.MaxOps = 50_000
	b := &bench{settings: defaultSettings()}
	b.rounds = 1
	b.contenders = 80
	b.keys = 300
	b.handoffs = 20
	report, err := harness.Run(context.Background(), "slotbench", o, b, testWriter{t})
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
	sections := map[string]string{}
	for _, s := range strings.Split(report, "\n## ")[1:] {
		title, body, _ := strings.Cut(s, "\n")
		sections[title] = body
	}
	for _, want := range []string{
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
	} {
		found := false
		for title, body := range sections {
			if strings.HasPrefix(title, want) {
				found = true
				if rows := tableRows(body); len(rows) == 0 {
					t.Errorf("table %q has no rows", title)
				}
			}
		}
		if !found {
			t.Errorf("report lacks the table %q", want)
		}
	}
	targets := tableRows(sections["Targets"])
	checkTargets(t, "Targets", targets)
	for _, r := range targets {
		if len(r) > 3 && !number.MatchString(r[3]) {
			t.Errorf("Targets: %q has no ratio: %q", r[0], r[3])
		}
	}
	var names []string
	for _, r := range targets {
		names = append(names, r[0])
	}
	want := []string{
		"Redis µs per TryAcquire+Release pair / seed scripts' pair",
		"pairs/s / raw INCR+DECR pairs/s, 4 callers",
		"Redis µs per refusal at a full key / seed's refusal",
		"memory, 60 holders",
		"allocations per TryAcquire / go-redis EvalSha",
		"hand-off latency p50 / PING round trip p50",
		"share of the limit inside the guarded section, 80 workers, limit 60, 20 ms holds",
		"commands sent per waited acquire, release included",
	}
	if !slices.Equal(names, want) {
		t.Errorf("targets:\n%q\nwant:\n%q", names, want)
	}
	checkTargets(t, "Other budgets", tableRows(sections["Other budgets"]))
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}

var number = regexp.MustCompile(`[0-9]`)

// checkTargets checks that every row of a table of targets has a number
// measured, a ratio when it has a target, and a verdict.
func checkTargets(t *testing.T, title string, rows [][]string) {
	t.Helper()
	if len(rows) == 0 {
		t.Errorf("%s: no rows", title)
	}
	for _, r := range rows {
		if len(r) != len(harness.TargetHead) {
			t.Errorf("%s: row %q has %d cells", title, r, len(r))
			continue
		}
		if !number.MatchString(r[1]) {
			t.Errorf("%s: %q measured no number: %q", title, r[0], r[1])
		}
		if r[2] != "" && r[3] != "" && !number.MatchString(r[3]) {
			t.Errorf("%s: %q has no ratio: %q", title, r[0], r[3])
		}
		if r[4] != "PASS" && r[4] != "**FAIL**" {
			t.Errorf("%s: %q has no verdict: %q", title, r[0], r[4])
		}
	}
}

// tableRows returns the cells of the rows of the first markdown table in
// s, without its head and separator.
func tableRows(s string) [][]string {
	var rows [][]string
	seen := 0
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "|") {
			if seen > 0 {
				break
			}
			continue
		}
		seen++
		if seen <= 2 {
			continue // the head and the separator
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows
}

// testWriter writes the run's progress lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
