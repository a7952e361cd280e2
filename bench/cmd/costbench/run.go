package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// warmupCalls are the calls per worker of each variant before its load,
// unmeasured, so that every script is in the server's cache and the pool
// has its connections.
const warmupCalls = 4

// A variant is one way of doing a row's operation: a call, or a pair of
// calls, for worker w.
type variant struct {
	name string
	// commands are the top-level commands its client sends, as INFO
	// commandstats names them, checked in every phase; nil for the
	// library's and the peers', whose commands are whatever their client
	// is seen to send, so that the row follows the library as it changes.
	commands []string
	call     func(ctx context.Context, w int) error
	// prepare, when set, runs before each phase, unmeasured, and returns
	// the most operations the phase may make.
	prepare func(ctx context.Context) (int64, error)
	// hits, when set, counts the calls that were allowed.
	hits *atomic.Int64
}

// A phase is one measured stretch of a variant's load, with the time of
// each call as its caller saw it.
type phase struct {
	harness.Phase
	p50, p99 time.Duration
	hits     int64 // calls allowed, for a variant that counts them
}

// A result is one variant's phases at one number of callers, a round
// each.
type result struct {
	name    string
	callers int
	rounds  []phase
}

// round returns the variant's phase in round i, or a phase of nothing.
func (r result) round(i int) phase {
	if i < 0 || i >= len(r.rounds) {
		return phase{}
	}
	return r.rounds[i]
}

// all returns every round summed, with the median of their p50s.
func (r result) all() phase {
	var sum phase
	var p50s []time.Duration
	for _, ph := range r.rounds {
		sum.Phase = sum.Add(ph.Phase)
		sum.hits += ph.hits
		p50s = append(p50s, ph.p50)
	}
	if len(p50s) > 0 {
		slices.Sort(p50s)
		sum.p50 = p50s[(len(p50s)-1)/2]
	}
	return sum
}

// top returns the top-level commands its client sent in any round,
// harness.SetupCommands aside.
func (r result) top() []string {
	all := r.all()
	var top []string
	for _, c := range slices.Sorted(maps.Keys(all.TopLevel)) {
		if all.TopLevel[c] > 0 && !slices.Contains(harness.SetupCommands, c) {
			top = append(top, c)
		}
	}
	return top
}

// runCalls runs the variants at each number of callers in counts: a
// warm-up, then b.Rounds rounds, each a measured phase of each variant on
// that many goroutines, bounded by b.Duration and b.MaxOps, the variants
// taking turns in every round, so that a drift in the machine's speed
// falls on all of them alike. It returns, for each count, one result per
// variant, in order. A call that fails ends the run with its error, and so
// does a phase whose top-level commands are not the variant's commands,
// when it names them.
func (b *bench) runCalls(ctx context.Context, counts []int, vs []variant) ([][]result, error) {
	out := make([][]result, len(counts))
	for c, n := range counts {
		out[c] = make([]result, len(vs))
		for i, v := range vs {
			out[c][i] = result{name: v.name, callers: n}
			if _, err := b.phase(ctx, v, harness.Bounds{Workers: n, Duration: b.Duration, MaxOps: warmupCalls * int64(n)}); err != nil {
				return nil, fmt.Errorf("warm-up of %s: %w", v.name, err)
			}
		}
		for range b.Rounds {
			for i, v := range vs {
				ph, err := b.phase(ctx, v, b.Bounds(n))
				if err == nil && v.commands != nil {
					err = ph.CheckCommands(v.commands)
				}
				if err != nil {
					return nil, fmt.Errorf("%s, %d callers: %w", v.name, n, err)
				}
				out[c][i].rounds = append(out[c][i].rounds, ph)
			}
		}
	}
	return out, nil
}

// phase runs one measured phase of v within bounds.
func (b *bench) phase(ctx context.Context, v variant, bounds harness.Bounds) (phase, error) {
	if v.prepare != nil {
		left, err := v.prepare(ctx)
		if err != nil {
			return phase{}, err
		}
		bounds.MaxOps = min(bounds.MaxOps, left)
	}
	var hits0 int64
	if v.hits != nil {
		hits0 = v.hits.Load()
	}
	lat := harness.NewTimings(bounds.Workers)
	ph, err := b.MeasureDrive(ctx, bounds, func(ctx context.Context, w int) error {
		t0 := time.Now()
		err := v.call(ctx, w)
		if err == nil {
			lat.Add(w, time.Since(t0))
		}
		return err
	})
	out := phase{Phase: ph}
	if q := lat.Quantiles(0.5, 0.99); err == nil {
		out.p50, out.p99 = q[0], q[1]
	}
	if v.hits != nil {
		out.hits = v.hits.Load() - hits0
	}
	return out, err
}

// containers are the commands whose server time includes the commands
// they run: the script calls, and EXEC.
var containers = []string{"evalsha", "eval", "evalsha_ro", "eval_ro", "fcall", "fcall_ro", "exec"}

// topOnly are commands that never run inside a script or an EXEC: the
// containers, MULTI, and those of a connection's own set-up and pub/sub,
// which a client may send past its hooks. Every call of one is the
// client's own.
var topOnly = append(slices.Clone(containers), "multi", "hello", "auth", "select", "client", "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe")

// A cmdCost is one command's share of a variant's operations.
type cmdCost struct {
	name   string
	top    bool    // sent by the client; else run by a script or EXEC
	calls  float64 // per operation
	usec   float64 // per operation
	perRun float64 // µs per call of the command
}

// A breakdown is what the server ran for a variant, per operation.
type breakdown struct {
	cmds     []cmdCost // top-level first, then those run inside, most costly first, ties by name
	total    float64   // µs of the top-level commands: the variant's Redis µs
	inside   float64   // µs of the commands run inside scripts and EXEC
	overhead float64   // µs of the scripts and EXEC less the commands they ran
}

// breakdownOf returns what the server ran in r, per operation. A command
// both sent by the client and run inside a script counts its calls beyond
// those sent as run inside, at its mean time per call.
func breakdownOf(r harness.Phase) breakdown {
	var bd breakdown
	if r.Ops == 0 {
		return bd
	}
	ops := float64(r.Ops)
	var containerUsec float64
	for name, s := range r.Server {
		if harness.IsOwn(name) || s.Calls == 0 {
			continue
		}
		perRun := float64(s.Usec) / float64(s.Calls)
		// The hook counts what the client sent from the phase's start,
		// the server what it ran from its reset: a call in flight between
		// the two is the server's alone.
		sent := min(r.TopLevel[name], s.Calls)
		if slices.Contains(topOnly, name) {
			sent = s.Calls
		}
		if sent > 0 {
			c := cmdCost{name: name, top: true, calls: float64(sent) / ops, usec: perRun * float64(sent) / ops, perRun: perRun}
			bd.cmds = append(bd.cmds, c)
			bd.total += c.usec
			if slices.Contains(containers, name) {
				containerUsec += c.usec
			}
		}
		if inside := s.Calls - sent; inside > 0 {
			c := cmdCost{name: name, calls: float64(inside) / ops, usec: perRun * float64(inside) / ops, perRun: perRun}
			bd.cmds = append(bd.cmds, c)
			bd.inside += c.usec
		}
	}
	if containerUsec > 0 {
		bd.overhead = containerUsec - bd.inside
	}
	slices.SortFunc(bd.cmds, func(a, b cmdCost) int {
		switch {
		case a.top != b.top:
			if a.top {
				return -1
			}
			return 1
		case a.usec != b.usec:
			return cmp.Compare(b.usec, a.usec)
		}
		return cmp.Compare(a.name, b.name)
	})
	return bd
}

// usecPerOp returns the server time of the top-level commands in ph per
// operation, in µs.
func usecPerOp(ph harness.Phase) float64 {
	return breakdownOf(ph).total
}
