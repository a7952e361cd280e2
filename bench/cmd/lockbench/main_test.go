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
// target, a number in each target's row, every variant, the bare lock
// first, the bounds among them, and every call alone.
func TestReportHasEveryTable(t *testing.T) {
	o := harnesstest.SmokeOptions(t)
	b := &bench{allocRuns: 50}
	out, err := harness.Run(context.Background(), "lockbench", o, b, harnesstest.Writer{T: t})
	if err != nil {
		t.Fatal(err)
	}
	report := string(out)

	sections := harnesstest.Sections(report)
	harnesstest.CheckTables(t, sections, []string{
		"Targets",
		"Lock and unlock",
		"Redis time per call",
		"Allocations per call",
	})
	targets := harnesstest.TableRows(sections["Targets"])
	harnesstest.CheckTargets(t, "Targets", targets)
	var names []string
	for _, r := range targets {
		names = append(names, r[0])
		if len(r) > 3 && !harnesstest.Number.MatchString(r[3]) {
			t.Errorf("Targets: %q has no ratio: %q", r[0], r[3])
		}
	}
	want := []string{
		"Redis µs per TryLock+Unlock pair / bare pair",
		"pairs/s / redislock's pairs/s, 4 workers",
	}
	if !slices.Equal(names, want) {
		t.Errorf("targets:\n%q\nwant:\n%q", names, want)
	}

	var variants []string
	for title, body := range sections {
		if strings.HasPrefix(title, "Lock and unlock") {
			for _, r := range harnesstest.TableRows(body) {
				variants = append(variants, r[0])
				if !harnesstest.Number.MatchString(r[1]) || !harnesstest.Number.MatchString(r[4]) {
					t.Errorf("variant %q has no pairs/s or Redis µs: %q", r[0], r)
				}
			}
		}
	}
	if want := []string{nameBare, nameSeed, nameRedislock, nameRedsync, nameMultiFence, nameTryLockCAD, nameLock}; !slices.Equal(variants, want) {
		t.Errorf("variants:\n%q\nwant:\n%q", variants, want)
	}

	var calls []string
	for _, r := range harnesstest.TableRows(sections["Redis time per call"]) {
		calls = append(calls, r[0])
		if !harnesstest.Number.MatchString(r[3]) {
			t.Errorf("call %q has no µs per call: %q", r[0], r)
		}
	}
	want = []string{
		callBareSet, callBareCAD, callSeedLock, callSeedUnlock,
		callMultiFence, callMultiCAD, callTryLockCAD, callLockCAD,
		callTryLock, callUnlock,
	}
	if !slices.Equal(calls, want) {
		t.Errorf("Redis time per call:\n%q\nwant:\n%q", calls, want)
	}
	if !strings.Contains(sections["Targets"], "*Fence by MULTI, no raise*") || !strings.Contains(sections["Targets"], "*TryLock + bare compare-and-delete*") {
		t.Error("Targets: no paragraph on the bounds")
	}
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}
