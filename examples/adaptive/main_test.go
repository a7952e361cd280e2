package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/slotlimit/slotlimit/internal/redistest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.Shutdown()
	os.Exit(code)
}

// The example passes its own checks on the embedded miniredis, and on a
// real Redis, and prints the limit as it moves.
func TestRun(t *testing.T) {
	for _, backend := range []struct {
		name string
		addr func(t *testing.T) string
	}{
		{"miniredis", func(*testing.T) string { return "" }},
		{"real Redis", func(t *testing.T) string { return redistest.Redis(t).Opts.Addrs[0] }},
	} {
		t.Run(backend.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(backend.addr(t), &out); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			for _, want := range []string{"capacity  limit", "phase 3: capacity 16", "\nPASS: "} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the output lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}
