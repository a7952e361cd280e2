// Adaptivebench drives a simulated external system whose capacity moves,
// through the slotlimit adaptive package and two baselines in the same
// run, and prints a markdown report of drop rates and goodput per phase,
// with an SVG plot of each variant's limit and calls in flight against
// the capacity over time.
//
// The simulated system serves at most -capacities concurrent calls (20,
// then 8, then 30), each phase lasting -phase (8s); a call takes -call
// (10ms), and a call that finds the system full is turned away, its
// caller learning so only after -timeout (50ms). -callers goroutines (60)
// call it without pause, spread over -instances instances (3), each with
// a go-redis client of its own. Each caller reports every call: Success
// when served, Dropped when turned away. The variants run at the same
// time, each with a simulated system and callers of its own, so that a
// busy machine weighs on all of them alike:
//
//   - adaptive: one adaptive.Limiter per instance on one key (Min 1,
//     Max 100, Initial 10, the package's defaults for the rest);
//   - static 20: one slotlimit.Limiter per instance on one key, limit 20;
//   - per instance: the same algorithm kept in each instance's memory,
//     as in-process adaptive limiters keep theirs (each Min 1, Max 100,
//     Initial 10).
//
// Without -redis it starts its own redis-server on a free loopback port,
// which needs redis-server on PATH, and stops it when done. From bench/:
//
//	go run ./cmd/adaptivebench
//	go run ./cmd/adaptivebench -o ../adaptive/BENCHMARKS.md
//
// With -o, the plot is written beside the report, as adaptive.svg (or to
// -svg).
//
// With -queue, the system queues instead: -capacities servers, each
// serving one call at a time for -call, behind a FIFO queue that takes
// every call; a caller gives up after -caller-timeout (1s), which counts
// as a drop. The variants are then: latency (the adaptive limit with
// RTTTolerance -tolerance, 1.5); drops only (the same, RTTTolerance 0);
// static 20; and per instance (the latency rule kept in each instance's
// memory). The report adds each phase's p50 and p99 latency of the calls
// to the system, and the plot their latency; -o ../adaptive/BENCHMARKS-queue.md
// writes it, and adaptive-queue.svg beside it. Its keys begin with "adaptivebench:" and a random tag, and it
// deletes them when done.
package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// settings are adaptivebench's own flags, beside the harness's.
type settings struct {
	phase      time.Duration // length of each capacity's phase
	callTime   time.Duration // how long the system serves a call
	timeout    time.Duration // how long a turned-away call takes to fail
	callers    int           // goroutines calling, over every instance
	instances  int           // instances, each with a client and a limiter
	capacities capacities    // the system's capacity in each phase
	static     int64         // the static limit
	sample     time.Duration // how often the limit and the calls in flight are sampled
	svg        string        // where to write the plot; "" beside -o

	queue         bool          // call a queueing system, not one that turns calls away
	callerTimeout time.Duration // -queue: how long a caller waits for its call
	tolerance     float64       // -queue: the latency variants' RTTTolerance
}

func defaultSettings() settings {
	return settings{
		phase: 8 * time.Second, callTime: 10 * time.Millisecond, timeout: 50 * time.Millisecond,
		callers: 60, instances: 3, capacities: capacities{20, 8, 30}, static: 20,
		sample: 50 * time.Millisecond, callerTimeout: time.Second, tolerance: 1.5,
	}
}

func (s *settings) registerFlags(fs *flag.FlagSet) {
	fs.DurationVar(&s.phase, "phase", s.phase, "length of each capacity's phase")
	fs.DurationVar(&s.callTime, "call", s.callTime, "how long the system serves a call")
	fs.DurationVar(&s.timeout, "timeout", s.timeout, "how long a call the system turns away takes to fail")
	fs.IntVar(&s.callers, "callers", s.callers, "goroutines calling, over every instance")
	fs.IntVar(&s.instances, "instances", s.instances, "instances, each with a client and a limiter of its own")
	fs.Var(&s.capacities, "capacities", "the system's capacity in each phase, comma-separated")
	fs.Int64Var(&s.static, "static", s.static, "the static limit")
	fs.DurationVar(&s.sample, "sample", s.sample, "how often the limit and the calls in flight are sampled")
	fs.StringVar(&s.svg, "svg", s.svg, "write the plot to `file`; empty: adaptive.svg (adaptive-queue.svg with -queue) beside -o, or none")
	fs.BoolVar(&s.queue, "queue", s.queue, "call a queueing system (servers and a FIFO queue; -caller-timeout counts as a drop), with the latency signal on")
	fs.DurationVar(&s.callerTimeout, "caller-timeout", s.callerTimeout, "-queue: how long a caller waits for its call before it counts it as dropped")
	fs.Float64Var(&s.tolerance, "tolerance", s.tolerance, "-queue: the RTTTolerance of the latency variants")
}

// check returns an error naming the first setting out of range.
func (s settings) check() error {
	switch {
	case s.phase <= 0 || s.callTime <= 0 || s.timeout <= 0 || s.sample <= 0:
		return fmt.Errorf("-phase, -call, -timeout and -sample must be positive")
	case s.instances < 1 || s.callers < s.instances:
		return fmt.Errorf("-instances %d, -callers %d: at least one instance, and a caller for each", s.instances, s.callers)
	case len(s.capacities) == 0:
		return fmt.Errorf("-capacities: none")
	case s.static < 1:
		return fmt.Errorf("-static %d: must be at least 1", s.static)
	case s.queue && (s.callerTimeout <= 0 || s.tolerance < 1):
		return fmt.Errorf("-caller-timeout %v, -tolerance %v: must be positive, and at least 1", s.callerTimeout, s.tolerance)
	}
	return nil
}

// capacities is a flag.Value: a comma-separated list of capacities.
type capacities []int64

func (c *capacities) String() string {
	if c == nil {
		return ""
	}
	s := make([]string, len(*c))
	for i, x := range *c {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ",")
}

func (c *capacities) Set(v string) error {
	var out capacities
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || n < 1 {
			return fmt.Errorf("%q: a capacity must be a whole number, at least 1", f)
		}
		out = append(out, n)
	}
	*c = out
	return nil
}

// A bench is the adaptive limit's suite: what every variant's run shares,
// and the figures they keep for the report.
type bench struct {
	settings
	*harness.Env
	runs    []run // in the order of the variants
	load    [2]string
	svgPath string
}

func main() {
	b := &bench{settings: defaultSettings()}
	b.registerFlags(flag.CommandLine)
	harness.Main("adaptivebench", b)
}

// Steps implements harness.Suite.
func (b *bench) Steps(env *harness.Env) []harness.Step {
	b.Env = env
	b.svgPath = b.svg
	if b.svgPath == "" && env.Out != "" {
		name := "adaptive.svg"
		if b.queue {
			name = "adaptive-queue.svg"
		}
		b.svgPath = filepath.Join(filepath.Dir(env.Out), name)
	}
	return []harness.Step{
		{Name: "setup", Run: b.setup},
		{Name: "every variant at once", Run: b.runAll},
		{Name: "plot", Run: b.plot},
	}
}
