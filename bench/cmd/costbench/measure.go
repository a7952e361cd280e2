package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// warmupCalls are the calls per worker of each variant before its row's
// load, unmeasured, so that every script is in the server's cache and the
// pool has its connections.
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
	// left, when set, returns how many more calls the variant can make,
	// which bounds each phase.
	left func() int64
}

// A result is one variant's phases, a round each, and their sum.
type result struct {
	name   string
	rounds []harness.Phase
	all    harness.Phase // every round summed
	top    []string      // top-level commands sent in any round, harness.SetupCommands aside
}

// newResult returns the result of the variant name's rounds.
func newResult(name string, rounds []harness.Phase) result {
	r := result{name: name, rounds: rounds}
	for _, ph := range rounds {
		r.all = r.all.Add(ph)
	}
	for _, c := range slices.Sorted(maps.Keys(r.all.TopLevel)) {
		if r.all.TopLevel[c] > 0 && !slices.Contains(harness.SetupCommands, c) {
			r.top = append(r.top, c)
		}
	}
	return r
}

// round returns the variant's phase in round i, or a phase of nothing.
func (r result) round(i int) harness.Phase {
	if i < 0 || i >= len(r.rounds) {
		return harness.Phase{}
	}
	return r.rounds[i]
}

// warm runs warmupCalls calls of each variant on every worker, unmeasured.
func (b *bench) warm(ctx context.Context, vs []variant) error {
	for _, v := range vs {
		bounds := harness.Bounds{Workers: b.Workers, Duration: b.Duration, MaxOps: warmupCalls * int64(b.Workers)}
		if v.left != nil {
			bounds.MaxOps = min(bounds.MaxOps, v.left())
		}
		if _, err := harness.Drive(ctx, bounds, v.call); err != nil {
			return fmt.Errorf("warm-up of %s: %w", v.name, err)
		}
	}
	return nil
}

// runCalls warms the variants up, then runs each on b.Workers goroutines
// for b.Rounds rounds, each a measured phase bounded by b.Bounds, the
// variants taking turns in every round, so that a drift in the machine's
// speed falls on all of them alike. It returns one result per variant, in
// order. A call that fails ends the run with its error, and so does a
// phase whose top-level commands are not the variant's commands, when it
// names them.
func (b *bench) runCalls(ctx context.Context, vs []variant) ([]result, error) {
	if err := b.warm(ctx, vs); err != nil {
		return nil, err
	}
	rounds := make([][]harness.Phase, len(vs))
	for range b.Rounds {
		for i, v := range vs {
			bounds := b.Bounds(b.Workers)
			if v.left != nil {
				bounds.MaxOps = min(bounds.MaxOps, v.left())
			}
			ph, err := b.MeasureDrive(ctx, bounds, v.call)
			if err == nil && v.commands != nil {
				err = ph.CheckCommands(v.commands)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v.name, err)
			}
			rounds[i] = append(rounds[i], ph)
		}
	}
	out := make([]result, len(vs))
	for i, v := range vs {
		out[i] = newResult(v.name, rounds[i])
	}
	return out, nil
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

// opsPerSecond returns the operations completed per second of ph's load.
func opsPerSecond(ph harness.Phase) float64 {
	return ph.Rate(ph.Ops)
}
