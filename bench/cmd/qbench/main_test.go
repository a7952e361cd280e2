package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/bench/internal/harness/harnesstest"
)

func TestMain(m *testing.M) { harnesstest.Main(m) }

// TestReportHasEveryTable keeps the benchmark from rotting: a tiny run,
// against a redis-server the test starts, must produce every table, both
// targets with a number in each, and every variant with its figures.
func TestReportHasEveryTable(t *testing.T) {
	o := harnesstest.SmokeOptions(t)
	o.Workers = harness.DefaultOptions().Workers
	o.MaxOps = 2_000
	b := &bench{settings: defaultSettings()}
	b.consumers, b.producers, b.backlog, b.tasks = 2, 2, 16, 50
	b.due = 50 * time.Millisecond
	b.latencyTimeout = 15 * time.Second
	out, err := harness.Run(context.Background(), "qbench", o, b, harnesstest.Writer{T: t})
	if err != nil {
		t.Fatal(err)
	}
	report := string(out)

	sections := harnesstest.Sections(report)
	harnesstest.CheckTables(t, sections, []string{"Targets", "Push, poll and ack", "Due-to-delivery latency"})
	targets := harnesstest.TableRows(sections["Targets"])
	harnesstest.CheckTargets(t, "Targets", targets)
	if len(targets) != 2 {
		t.Errorf("Targets: %d rows, want 2", len(targets))
	}

	check := func(prefix string, want []string, cells ...int) {
		t.Helper()
		var got []string
		for title, body := range sections {
			if len(title) >= len(prefix) && title[:len(prefix)] == prefix {
				for _, r := range harnesstest.TableRows(body) {
					got = append(got, r[0])
					for _, c := range cells {
						if !harnesstest.Number.MatchString(r[c]) {
							t.Errorf("%s: %q has no number in column %d: %q", prefix, r[0], c, r)
						}
					}
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s variants:\n%q\nwant:\n%q", prefix, got, want)
		}
	}
	check("Push, poll and ack", []string{nameQueue, nameSeed, nameAsynq}, 1, 2, 3)
	check("Due-to-delivery latency", []string{nameQueueRun, nameSeed, nameAsynq, nameAsynqFast + b.due.String()}, 1, 3, 4)
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}
