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

// Only a loopback address is served on.
func TestRunRefusesAnOpenAddress(t *testing.T) {
	if err := run(500*time.Millisecond, "0.0.0.0:0", 4, &bytes.Buffer{}); err == nil {
		t.Fatal("served on 0.0.0.0")
	}
}
