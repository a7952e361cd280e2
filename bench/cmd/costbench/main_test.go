package main

import (
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/bench/internal/harness/harnesstest"
)

func TestMain(m *testing.M) { harnesstest.Main(m) }

// TestReportHasEveryRow keeps the benchmark from rotting: a tiny run,
// against a redis-server the test starts, must produce every target, in
// order, each with figures, a ratio and a verdict; every variant at each
// number of callers; a breakdown that lists the commands of the library's
// call and of its baseline; and the plots it links, well-formed SVG.
func TestReportHasEveryRow(t *testing.T) {
	o := harnesstest.SmokeOptions(t)
	dir := t.TempDir()
	o.Out = filepath.Join(dir, "BENCHMARKS.md")
	b := &bench{settings: defaultSettings()}
	b.crowd, b.shares, b.recentMax, b.recentUsers, b.backlog, b.tasks, b.due = 8, 1000, 5, 2, 16, 40, 10*time.Millisecond
	out, err := harness.Run(context.Background(), "costbench", o, b, harnesstest.Writer{T: t})
	if err != nil {
		t.Fatal(err)
	}
	report := string(out)
	sections := harnesstest.Sections(report)

	rows := harnesstest.TableRows(sections["Targets"])
	if len(rows) != 12 {
		t.Errorf("%d targets, want 12", len(rows))
	}
	for _, r := range rows {
		if len(r) != len(costHead) {
			t.Errorf("row %q has %d cells", r, len(r))
			continue
		}
		if !harnesstest.Number.MatchString(r[2]) || !harnesstest.Number.MatchString(r[4]) || r[4] == "0.00×" {
			t.Errorf("row %q has no figures or no ratio: %q", r[0], r)
		}
		if r[5] != "PASS" && r[5] != "**FAIL**" {
			t.Errorf("row %q has no verdict: %q", r[0], r[5])
		}
	}
	for i, want := range []string{"limiter TryAcquire+Release pairs/s, 4 callers", "the same, 8 callers", "limiter Redis µs", "one caller alone", "GCRA Allow", "GCRA Allow", "red-packet Grab", "delay queue, Redis µs", "delay queue, due-to-run p99", "lock", "fixed window", "recent"} {
		if i < len(rows) && !strings.HasPrefix(rows[i][0], want) {
			t.Errorf("target %d is %q, want %q", i+1, rows[i][0], want)
		}
	}

	seen := map[string]int{}
	for _, r := range harnesstest.TableRows(sections["Every variant, at each number of callers"]) {
		seen[r[0]+" at "+r[1]]++
	}
	for _, name := range []string{nameLimiter, nameLease, nameIncrDecr, nameOff, nameGCRA, nameRedisRate, nameGrab, nameClassic} {
		for _, n := range []string{"1", "4", "8"} {
			if seen[name+" at "+n] != 1 {
				t.Errorf("every variant: %s at %s callers appears %d times", name, n, seen[name+" at "+n])
			}
		}
	}

	body := sections["Breakdown: red-packet Grab, 4 callers, per grab"]
	for _, want := range []string{nameGrab + ", 4 callers", nameClassic + ", 4 callers", "| rpush |", "**Redis µs per grab**"} {
		if !strings.Contains(body, want) {
			t.Errorf("the grab's breakdown lacks %q:\n%s", want, body)
		}
	}

	for _, name := range []string{"limiter", "grab"} {
		if !strings.Contains(report, "(docs/bench/"+name+".svg)") {
			t.Errorf("report does not link docs/bench/%s.svg", name)
		}
		svg, err := os.ReadFile(filepath.Join(dir, "docs", "bench", name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		d := xml.NewDecoder(strings.NewReader(string(svg)))
		for {
			if _, err := d.Token(); err != nil {
				if err.Error() != "EOF" {
					t.Errorf("%s.svg: %v", name, err)
				}
				break
			}
		}
		if !strings.Contains(string(svg), "<polyline") {
			t.Errorf("%s.svg draws no line", name)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}
