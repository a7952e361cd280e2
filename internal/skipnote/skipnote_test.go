package skipnote

import (
	"os/exec"
	"strings"
	"testing"
)

// TestReportWithoutV runs a package whose test skips for want of a real
// Redis the way go test runs a list of packages, which shows a passing
// package's output only with -v: the line must be in the output anyway,
// once, before the package's "ok" line, and again on a second run (go test
// must not replay a cached result without it).
func TestReportWithoutV(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	want := "github.com/slotlimit/slotlimit/internal/skipnote/testdata/skipping: skipped 1 test for want of a server: " +
		"real Redis (1: redis-server not found on PATH); set SLOTLIMIT_REQUIRE_REDIS=1 to fail instead\n"
	for run := range 2 {
		for _, args := range [][]string{{"test", "./testdata/skipping"}, {"test", "-v", "./testdata/skipping"}} {
			out, err := exec.Command("go", args...).CombinedOutput()
			if err != nil {
				t.Fatalf("go %v: %v\n%s", args, err, out)
			}
			if n := strings.Count(string(out), want); n != 1 {
				t.Fatalf("run %d, go %v: the skip line appears %d times, want once:\n%s", run, args, n, out)
			}
			if i := strings.Index(string(out), want); i > strings.LastIndex(string(out), "ok  \t") {
				t.Fatalf("run %d, go %v: the skip line comes after the ok line:\n%s", run, args, out)
			}
		}
	}
}

func TestStartedByGoTest(t *testing.T) {
	for cmdline, want := range map[string]bool{
		"go\x00test\x00./...\x00":                true,
		"/usr/local/go/bin/go\x00test\x00-v\x00": true,
		"go\x00vet\x00":                          false,
		"gopls\x00test\x00":                      false,
		"":                                       false,
	} {
		if got := startedByGoTest([]byte(cmdline)); got != want {
			t.Errorf("startedByGoTest(%q) = %v, want %v", cmdline, got, want)
		}
	}
}
