package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/bench/internal/harness/harnesstest"
)

func TestMain(m *testing.M) { harnesstest.Main(m) }

// TestReportHasEveryTable keeps the benchmark from rotting: a tiny run,
// against a redis-server the test starts, with phases of a fraction of a
// second, must produce the targets with a number and a verdict in each
// row, a row per variant and phase with a number in each figure's cell,
// and the plot, a panel per variant.
func TestReportHasEveryTable(t *testing.T) {
	o := harnesstest.SmokeOptions(t)
	b := &bench{settings: defaultSettings()}
	b.phase, b.callers, b.capacities = 300*time.Millisecond, 6, capacities{4, 2, 5}
	b.svg = filepath.Join(t.TempDir(), "plot.svg")
	out, err := harness.Run(context.Background(), "adaptivebench", o, b, harnesstest.Writer{T: t})
	if err != nil {
		t.Fatal(err)
	}
	report := string(out)

	sections := harnesstest.Sections(report)
	harnesstest.CheckTables(t, sections, []string{"Targets", "Phases"})
	targets := harnesstest.TableRows(sections["Targets"])
	harnesstest.CheckTargets(t, "Targets", targets)
	if len(targets) != 3*3+2 {
		t.Errorf("Targets: %d rows, want 3 a phase and 2 against the static limit", len(targets))
	}

	var got []string
	for _, r := range harnesstest.TableRows(sections["Phases"]) {
		got = append(got, r[0]+" "+r[1])
		for i := 2; i < len(r); i++ {
			if !harnesstest.Number.MatchString(r[i]) {
				t.Errorf("Phases: %q has no number in column %d", r, i)
			}
		}
	}
	var want []string
	for _, v := range variantNames {
		for _, c := range b.capacities {
			want = append(want, v+" "+strconv.FormatInt(c, 10))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("Phases: rows\n%q\nwant\n%q", got, want)
	}

	svg, err := os.ReadFile(b.svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range variantNames {
		if !strings.Contains(string(svg), ">"+v+"</text>") {
			t.Errorf("the plot has no panel %q", v)
		}
	}
	if n := strings.Count(string(svg), "<polyline"); n != 3*len(variantNames) {
		t.Errorf("the plot has %d lines, want 3 a panel", n)
	}
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}

// TestQueueReportHasEveryTable does the same for -queue: four variants,
// four targets a phase, the latency figures, and the latency in the plot.
func TestQueueReportHasEveryTable(t *testing.T) {
	o := harnesstest.SmokeOptions(t)
	b := &bench{settings: defaultSettings()}
	b.queue = true
	b.phase, b.callers, b.capacities = 300*time.Millisecond, 6, capacities{4, 2, 5}
	b.svg = filepath.Join(t.TempDir(), "plot.svg")
	out, err := harness.Run(context.Background(), "adaptivebench", o, b, harnesstest.Writer{T: t})
	if err != nil {
		t.Fatal(err)
	}
	report := string(out)

	sections := harnesstest.Sections(report)
	harnesstest.CheckTables(t, sections, []string{"Targets", "Phases"})
	targets := harnesstest.TableRows(sections["Targets"])
	harnesstest.CheckTargets(t, "Targets", targets)
	if len(targets) != 4*3 {
		t.Errorf("Targets: %d rows, want 4 a phase", len(targets))
	}
	var got []string
	for _, r := range harnesstest.TableRows(sections["Phases"]) {
		got = append(got, r[0]+" "+r[1])
		for i := 2; i < len(r); i++ {
			if !harnesstest.Number.MatchString(r[i]) {
				t.Errorf("Phases: %q has no number in column %d", r, i)
			}
		}
	}
	var want []string
	for _, v := range queueVariantNames {
		for _, c := range b.capacities {
			want = append(want, v+" "+strconv.FormatInt(c, 10))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("Phases: rows\n%q\nwant\n%q", got, want)
	}
	svg, err := os.ReadFile(b.svg)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(svg), "<polyline"); n != 4*len(queueVariantNames) {
		t.Errorf("the plot has %d lines, want 4 a panel", n)
	}
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}

// The queueing system serves every call queued for its one server and
// frees the server after each; a caller that waited past its timeout
// behind a call that holds the server counts a drop.
func TestQueueSystem(t *testing.T) {
	s := newQueueSystem(50*time.Millisecond, time.Hour, 1)
	done := make(chan bool, 3)
	for range 3 {
		go func() { _, ok := s.serve(); done <- ok }()
	}
	for i := range 3 {
		if !<-done {
			t.Fatalf("call %d: not served", i)
		}
	}
	s.mu.Lock()
	busy := s.busy
	s.mu.Unlock()
	if busy != 0 {
		t.Fatalf("%d servers busy after every call", busy)
	}

	s = newQueueSystem(time.Hour, 10*time.Millisecond, 1)
	go s.serve() // holds the one server for an hour
	for s.inFlight() == 0 {
		time.Sleep(time.Millisecond)
	}
	if _, ok := s.serve(); ok {
		t.Fatal("a call queued behind an hour's call was served")
	}
}
