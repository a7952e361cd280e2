package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A short run serves every expected metric, and prints them.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(500*time.Millisecond, "127.0.0.1:0", 4, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"# TYPE slotlimit_calls_total counter", `slotlimit_operation="Acquire"`, "_bucket lines)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, out.String())
		}
	}
}

// The run ends by cancelling its workers' context, which cuts short the
// Acquire and Lock calls that are waiting then: those calls count under
// outcome "canceled", never as errors. A run of a few workers nearly
// always ends with one of them waiting for the lock; of three runs, one
// at least must have cut a call short, or the test shows nothing.
func TestShutdownCountsNoError(t *testing.T) {
	cut := 0
	for i := range 3 {
		var out bytes.Buffer
		if err := run(300*time.Millisecond, "127.0.0.1:0", 4, &out); err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, out.String())
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(line, "slotlimit_errors_total{") || strings.Contains(line, `slotlimit_outcome="error"`) {
				t.Errorf("run %d: a shutdown counted as an error: %s", i, line)
			}
		}
		if strings.Contains(out.String(), `slotlimit_outcome="canceled"`) {
			cut++
		}
	}
	if cut == 0 {
		t.Error("no run counted a call as canceled")
	}
}
