// Package skipnote tells whoever runs go test, in one line and without -v,
// which tests a test binary skipped because a server they need could not be
// had: a real Redis, a Redis Cluster, a Redis with TLS, or PostgreSQL.
//
// go test shows a passing package's output only with -v, or when it tests
// the package in the current directory alone; otherwise it prints just its
// "ok" line, and a run that skipped every real-server test looks like one
// that ran them. Report writes its line where the go command writes that
// "ok" line (see sink_linux.go), so it is seen in either mode.
package skipnote

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// notes holds the skips of this test binary, by server.
var notes struct {
	mu       sync.Mutex
	count    map[string]int
	reason   map[string]string // the first reason given for each server
	reported bool
}

// Skip records that tb needs server (such as "real Redis") and could not
// have it because of err, then skips tb with a message that says why and
// how to fail instead.
func Skip(tb interface {
	Helper()
	Skipf(string, ...any)
}, server string, err error, hint string) {
	tb.Helper()
	notes.mu.Lock()
	if notes.count == nil {
		notes.count = make(map[string]int)
		notes.reason = make(map[string]string)
	}
	notes.count[server]++
	if _, ok := notes.reason[server]; !ok {
		notes.reason[server] = fmt.Sprint(err)
	}
	notes.mu.Unlock()
	tb.Skipf("skipping %s test: %v (%s)", server, err, hint)
}

// Report writes one line naming the servers whose tests were skipped, with
// how many and why, if any were. Call it from TestMain after m.Run; it
// writes at most once per test binary.
func Report() {
	notes.mu.Lock()
	defer notes.mu.Unlock()
	if notes.reported || len(notes.count) == 0 {
		return
	}
	notes.reported = true
	w := sink()
	defer w.Close()
	fmt.Fprintln(w, line())
}

// keepFromCache keeps go test from caching this run, whose report it
// would not replay: a cached run prints only its "ok" line. go test keeps
// a run's result with the list of inputs it read, written to the file
// named by -test.testlogfile, and runs the test again when one of them
// changed; the line added here names the directory of the go command
// that started this run, which is gone by the next. The testing package
// has closed the file when m.Run returns.
func keepFromCache(goCommand string) {
	f := flag.Lookup("test.testlogfile")
	if f == nil || f.Value.String() == "" {
		return
	}
	log, err := os.OpenFile(f.Value.String(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer log.Close()
	fmt.Fprintf(log, "chdir %s\n", goCommand)
}

// line is the report: the package, then each server with its count and
// first reason.
func line() string {
	servers := make([]string, 0, len(notes.count))
	for s := range notes.count {
		servers = append(servers, s)
	}
	sort.Strings(servers)
	parts := make([]string, len(servers))
	total := 0
	for i, s := range servers {
		n := notes.count[s]
		total += n
		parts[i] = fmt.Sprintf("%s (%d: %s)", s, n, notes.reason[s])
	}
	var require []string
	for _, s := range servers {
		env := "SLOTLIMIT_REQUIRE_REDIS=1"
		if s == "PostgreSQL" {
			env = "SLOTLIMIT_REQUIRE_POSTGRES=1"
		}
		if len(require) == 0 || require[len(require)-1] != env {
			require = append(require, env)
		}
	}
	sort.Strings(require)
	return fmt.Sprintf("%s: skipped %d %s for want of a server: %s; set %s to fail instead",
		packagePath(), total, plural(total, "test", "tests"), strings.Join(parts, ", "), strings.Join(slices.Compact(require), " and "))
}

// nopCloser is an io.WriteCloser whose Close leaves its Writer open.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// packagePath returns the import path of the package under test: go test
// runs a test binary in its package's directory, so it is the module path
// in the nearest go.mod joined with the directory below it. It falls back
// to the test binary's name.
func packagePath() string {
	fallback := strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
	dir, err := os.Getwd()
	if err != nil {
		return fallback
	}
	for d := dir; ; d = filepath.Dir(d) {
		if mod := modulePath(filepath.Join(d, "go.mod")); mod != "" {
			rel, err := filepath.Rel(d, dir)
			if err != nil || rel == "." {
				return mod
			}
			return mod + "/" + filepath.ToSlash(rel)
		}
		if filepath.Dir(d) == d {
			return fallback
		}
	}
}

// modulePath returns the module line of the go.mod at path, or "".
func modulePath(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// verbose reports whether the test output is shown anyway: -v, or -json,
// whose converter runs the binary with -test.v=test2json. testing.Verbose
// panics before flags are parsed, so a Report outside a test run counts as
// verbose.
func verbose() (v bool) {
	defer func() {
		if recover() != nil {
			v = true
		}
	}()
	return testing.Verbose()
}
