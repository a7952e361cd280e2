// Package harnesstest checks the reports of this module's benchmark
// commands in their tests: that a tiny run produced every table, with rows,
// and a number and a verdict in every target row.
package harnesstest

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// Number matches a cell that holds a number.
var Number = regexp.MustCompile(`[0-9]`)

// Sections returns the bodies of a markdown report's "## " sections, by
// their titles.
func Sections(report string) map[string]string {
	sections := map[string]string{}
	for _, s := range strings.Split(report, "\n## ")[1:] {
		title, body, _ := strings.Cut(s, "\n")
		sections[title] = body
	}
	return sections
}

// CheckTables checks that, for each entry of want, sections has a section
// whose title begins with it, and that each such section's table has rows.
func CheckTables(t testing.TB, sections map[string]string, want []string) {
	t.Helper()
	for _, w := range want {
		found := false
		for title, body := range sections {
			if strings.HasPrefix(title, w) {
				found = true
				if len(TableRows(body)) == 0 {
					t.Errorf("table %q has no rows", title)
				}
			}
		}
		if !found {
			t.Errorf("report lacks the table %q", w)
		}
	}
}

// CheckTargets checks that a table of targets (see harness.TargetTable)
// has rows, and that each has a number measured, a ratio when it has a
// target, and a verdict.
func CheckTargets(t testing.TB, title string, rows [][]string) {
	t.Helper()
	if len(rows) == 0 {
		t.Errorf("%s: no rows", title)
	}
	for _, r := range rows {
		if len(r) != len(harness.TargetHead) {
			t.Errorf("%s: row %q has %d cells", title, r, len(r))
			continue
		}
		if !Number.MatchString(r[1]) {
			t.Errorf("%s: %q measured no number: %q", title, r[0], r[1])
		}
		if r[2] != "" && r[3] != "" && !Number.MatchString(r[3]) {
			t.Errorf("%s: %q has no ratio: %q", title, r[0], r[3])
		}
		if r[4] != "PASS" && r[4] != "**FAIL**" {
			t.Errorf("%s: %q has no verdict: %q", title, r[0], r[4])
		}
	}
}

// TableRows returns the cells of the rows of the first markdown table in
// s, without its head and separator.
func TableRows(s string) [][]string {
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

// A Writer writes a run's progress lines to a test's log.
type Writer struct{ T testing.TB }

// Write implements io.Writer.
func (w Writer) Write(p []byte) (int, error) {
	w.T.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Main runs a command's tests and then stops the real Redis servers they
// started; call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	redistest.Shutdown()
	os.Exit(code)
}

// SmokeOptions are the options of a command's tiny run in its test:
// against the shared redis-server the test starts (see redistest.Addr),
// 4 workers, 100ms phases of at most 20,000 operations, one round.
func SmokeOptions(t *testing.T) harness.Options {
	o := harness.DefaultOptions()
	o.Addr = redistest.Addr(t)
	o.Duration = 100 * time.Millisecond
	o.Workers = 4
	o.Pool = 32
	o.MaxOps = 20_000
	o.Rounds = 1
	return o
}
