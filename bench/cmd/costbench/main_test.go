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

// TestReportHasEveryRow keeps the benchmark from rotting: a tiny run,
// against a redis-server the test starts, must produce every row of the
// table, in order, each with figures, a ratio and a verdict, and a
// breakdown under it that lists the commands of the library's call and of
// its baseline.
func TestReportHasEveryRow(t *testing.T) {
	o := harnesstest.SmokeOptions(t)
	b := &bench{settings: defaultSettings()}
	b.packets, b.shares, b.recentMax, b.recentUsers, b.backlog = 4, 1000, 5, 2, 16
	out, err := harness.Run(context.Background(), "costbench", o, b, harnesstest.Writer{T: t})
	if err != nil {
		t.Fatal(err)
	}
	report := string(out)
	sections := harnesstest.Sections(report)

	var names []string
	for _, r := range harnesstest.TableRows(sections["Targets"]) {
		if len(r) != len(costHead) {
			t.Errorf("row %q has %d cells", r, len(r))
			continue
		}
		names = append(names, r[0])
		if !harnesstest.Number.MatchString(r[2]) || !harnesstest.Number.MatchString(r[4]) || r[4] == "0.00×" {
			t.Errorf("row %q has no figures or no ratio: %q", r[0], r)
		}
		if r[5] != "PASS" && r[5] != "**FAIL**" {
			t.Errorf("row %q has no verdict: %q", r[0], r[5])
		}
	}
	want := []string{
		"limiter TryAcquire+Release (Redis µs per pair)",
		"limiter pairs/s (4 workers)",
		"lock TryLock+Unlock",
		"ratelimit GCRA Allow",
		"ratelimit fixed window Allow",
		"redpacket Grab",
		"recent Add",
		"delayqueue, per task pushed, delivered and acked",
	}
	if !slices.Equal(names, want) {
		t.Errorf("rows:\n%q\nwant:\n%q", names, want)
	}

	for _, x := range []struct{ title, lib, base, libCmd, baseCmd string }{
		{"Breakdown: limiter TryAcquire+Release, per pair", nameLimiter, nameLease, "evalsha", "zremrangebyscore"},
		{"Breakdown: lock TryLock+Unlock, per pair", nameLock, nameBareLock, "del", "set"},
		{"Breakdown: ratelimit GCRA Allow, per Allow", nameGCRA, nameRedisRate, "evalsha", "time"},
		{"Breakdown: ratelimit fixed window Allow, per Allow", nameWindow, nameSeedWin, "evalsha", "incr"},
		{"Breakdown: redpacket Grab, per Grab", nameGrab, nameSeedGrab, "evalsha", "rpush"},
		{"Breakdown: recent Add, per Add", nameRecent, nameSeedAdd, "evalsha", "zcard"},
		{"Breakdown: delayqueue Push + Run, per task", nameQueue, nameAsynq, "evalsha", "evalsha"},
	} {
		body, ok := sections[x.title]
		if !ok {
			t.Errorf("report lacks the breakdown %q", x.title)
			continue
		}
		// Each variant's commands follow the row that names it.
		cmds := map[string][]string{}
		variant := ""
		for _, r := range harnesstest.TableRows(body) {
			if r[0] != "" {
				variant = r[0]
			}
			cmds[variant] = append(cmds[variant], r[1])
		}
		for _, v := range []struct{ name, cmd string }{{x.lib, x.libCmd}, {x.base, x.baseCmd}} {
			if !slices.Contains(cmds[v.name], v.cmd) || !slices.ContainsFunc(cmds[v.name], func(c string) bool { return strings.HasPrefix(c, "**Redis µs") }) {
				t.Errorf("%s: %s lists %q, want %s and its Redis µs", x.title, v.name, cmds[v.name], v.cmd)
			}
		}
	}
	for _, link := range []string{"(bench/limiter.md)", "(lock/BENCHMARKS.md)", "(delayqueue/BENCHMARKS.md)"} {
		if !strings.Contains(report, link) {
			t.Errorf("report does not link %s", link)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}
