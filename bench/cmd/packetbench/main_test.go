package main

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/bench/internal/harness/harnesstest"
	"github.com/slotlimit/slotlimit/internal/sqltest"
)

func TestMain(m *testing.M) { harnesstest.Main(m) }

// TestReportHasEveryTable keeps the benchmark from rotting: a tiny run,
// against a redis-server the test starts and a PostgreSQL the command
// starts, must produce every table, a ratio in every row of the ratios,
// both grabbers, the classic first, with their figures, and a row for each
// database and batch, PostgreSQL's skipped only when it is not required.
func TestReportHasEveryTable(t *testing.T) {
	o := harnesstest.SmokeOptions(t)
	b := &bench{settings: defaultSettings()}
	b.packets, b.shares = 2, 500
	b.claims, b.claimsBatch1 = 300, 30
	b.timeout = time.Minute
	out, err := harness.Run(context.Background(), "packetbench", o, b, harnesstest.Writer{T: t})
	if err != nil {
		t.Fatal(err)
	}
	report := string(out)

	takes, refusals := "Grabs that take a share: 4 workers", "Grabs refused, sold out: 4 workers"
	persisted := "Persister: claims written to SQL"
	sections := harnesstest.Sections(report)
	harnesstest.CheckTables(t, sections, []string{"Ratios", takes, refusals, persisted})

	requirePG := os.Getenv(sqltest.RequireEnv) == "1"
	var names []string
	for _, r := range harnesstest.TableRows(sections["Ratios"]) {
		names = append(names, r[0])
		if !harnesstest.Number.MatchString(r[2]) && (requirePG || r[1] != "skipped") {
			t.Errorf("Ratios: %q has no ratio: %q", r[0], r)
		}
	}
	want := []string{
		"grabs/s, Store.Grab / classic script, 4 workers, shares taken",
		"Redis µs per grab, Store.Grab / classic script, shares taken",
		"grabs/s, Store.Grab / classic script, 4 workers, sold out",
		"Redis µs per grab, Store.Grab / classic script, sold out",
		"SQLite rows/s, Batch 100 / Batch 1",
		"SQLite rows/s, Batch 1,000 / Batch 100",
		"PostgreSQL rows/s, Batch 100 / Batch 1",
		"PostgreSQL rows/s, Batch 1,000 / Batch 100",
	}
	if !slices.Equal(names, want) {
		t.Errorf("ratios:\n%q\nwant:\n%q", names, want)
	}

	for _, title := range []string{takes, refusals} {
		var got []string
		for _, r := range harnesstest.TableRows(sections[title]) {
			got = append(got, r[0])
			for _, i := range []int{1, 2, 5, 6} {
				if !harnesstest.Number.MatchString(r[i]) {
					t.Errorf("%s: %q has no number in column %d: %q", title, r[0], i, r)
				}
			}
		}
		if want := []string{nameSeed, nameStore}; !slices.Equal(got, want) {
			t.Errorf("%s: grabbers:\n%q\nwant:\n%q", title, got, want)
		}
	}

	var got [][2]string
	for _, r := range harnesstest.TableRows(sections[persisted]) {
		got = append(got, [2]string{r[0], r[1]})
		if r[6] == "skipped" && r[0] == namePostgres && !requirePG {
			continue
		}
		for _, i := range []int{2, 3, 4, 5, 6, 7, 8, 9} {
			if !harnesstest.Number.MatchString(r[i]) {
				t.Errorf("%s: %q has no number in column %d: %q", persisted, r[0], i, r)
			}
		}
	}
	wantRows := [][2]string{
		{nameSQLite, "1"}, {nameSQLite, "100"}, {nameSQLite, "1,000"},
		{namePostgres, "1"}, {namePostgres, "100"}, {namePostgres, "1,000"},
	}
	if !slices.Equal(got, wantRows) {
		t.Errorf("%s: rows:\n%q\nwant:\n%q", persisted, got, wantRows)
	}
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}
