package main

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/slotlimit/slotlimit/internal/redistest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.Shutdown()
	os.Exit(code)
}

// The example runs to its verdict on the embedded miniredis, and on a real
// Redis, prints the limit as it moves, and the limit follows the capacity:
// after the capacity falls the API refuses calls and the limit comes down,
// after it rises the limit goes up, and both instances are served.
//
// The verdict's bands (the limit's mean within a range around the
// capacity, at most so many refusals a second) are figures of the
// machine's speed as much as of the limit: a starved CPU keeps workers
// between their slot and their call, so that the API sees fewer calls than
// the slots held, reports no refusals, and the limit climbs past the
// capacity. So the test checks the order of events above itself, logs a
// verdict that missed its bands, and requires the PASS line of one that
// met them.
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
			err := run(backend.addr(t), &out)
			text := out.String()
			if err != nil && !strings.Contains(text, "\nin all: ") {
				t.Fatalf("the run ended before its verdict: %v\n%s", err, text)
			}
			for _, want := range []string{"capacity  limit", "phase 3: capacity 16", "\nin all: "} {
				if !strings.Contains(text, want) {
					t.Errorf("the output lacks %q:\n%s", want, text)
				}
			}

			summaries := phaseLine.FindAllStringSubmatch(text, -1)
			if len(summaries) != len(phases) {
				t.Fatalf("%d phase summaries, want %d:\n%s", len(summaries), len(phases), text)
			}
			means := make([]float64, len(phases))
			for p, m := range summaries {
				if n, c := atoi(t, m[1]), atoi(t, m[2]); n != int64(p+1) || c != phases[p].capacity {
					t.Fatalf("summary %d is of phase %d, capacity %d, want phase %d, capacity %d", p, n, c, p+1, phases[p].capacity)
				}
				mean, perr := strconv.ParseFloat(m[3], 64)
				if perr != nil {
					t.Fatal(perr)
				}
				means[p] = mean
			}
			for p := 1; p < len(phases); p++ {
				if fell := phases[p].capacity < phases[p-1].capacity; fell != (means[p] < means[p-1]) {
					t.Errorf("phase %d: the capacity went from %d to %d, the limit from %.1f to %.1f", p+1, phases[p-1].capacity, phases[p].capacity, means[p-1], means[p])
				}
				if phases[p].capacity < phases[p-1].capacity && atoi(t, summaries[p][5]) == 0 {
					t.Errorf("phase %d: the capacity fell, yet the API refused no call", p+1)
				}
			}
			if m := servedLine.FindStringSubmatch(text); m == nil {
				t.Errorf("the output lacks the instances' calls:\n%s", text)
			} else if atoi(t, m[1]) == 0 || atoi(t, m[2]) == 0 {
				t.Errorf("an instance was never served: %s and %s calls", m[1], m[2])
			}

			if err != nil {
				t.Logf("the verdict's bands were missed, on this machine: %v\n%s", err, text)
			} else if !strings.Contains(text, "\nPASS: ") {
				t.Errorf("the verdict's PASS is missing:\n%s", text)
			}
		})
	}
}

var (
	phaseLine  = regexp.MustCompile(`(?m)^phase (\d+): capacity (\d+), limit ([0-9.]+) on average in its last second; (\d+) calls served, (\d+) refused by the API`)
	servedLine = regexp.MustCompile(`(?m)^in all: .*; instances served (\d+) and (\d+)$`)
)

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
