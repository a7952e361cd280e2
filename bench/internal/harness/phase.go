package harness

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// A Phase is one measured stretch of load, or the sum of several.
type Phase struct {
	Ops     int64         // operations completed: pairs, tries, bursts
	Elapsed time.Duration // wall time of the load
	Sent    int64         // commands the load client sent
	Trips   int64         // the load client's round trips: single commands and pipelines
	Server  Stats         // INFO commandstats over the phase
	// TopLevel counts the commands the load client sent that the server
	// runs at top level, by name (see CommandCounter.TopLevel).
	TopLevel map[string]int64
}

// Add returns the sum of p and q.
func (p Phase) Add(q Phase) Phase {
	top := maps.Clone(p.TopLevel)
	if top == nil {
		top = map[string]int64{}
	}
	for name, n := range q.TopLevel {
		top[name] += n
	}
	return Phase{p.Ops + q.Ops, p.Elapsed + q.Elapsed, p.Sent + q.Sent, p.Trips + q.Trips, p.Server.Add(q.Server), top}
}

// SetupCommands are the commands go-redis sends on a connection it has
// just dialed, before any call uses it (HELLO, CLIENT SETINFO, and AUTH,
// SELECT or READONLY when configured): the pool's, not a call's.
var SetupCommands = []string{"hello", "client", "auth", "select", "readonly"}

// CheckCommands returns an error unless the load client's top-level
// commands in the phase, SetupCommands aside, are exactly commands, each
// sent at least once, so that a figure summed over commands, such as the
// server time of a call, counts all that the load made the server run and
// nothing else. A phase of no operations passes.
func (p Phase) CheckCommands(commands []string) error {
	if p.Ops == 0 {
		return nil
	}
	var missing, unsent []string
	for _, name := range slices.Sorted(maps.Keys(p.TopLevel)) {
		if p.TopLevel[name] > 0 && !slices.Contains(commands, name) && !slices.Contains(SetupCommands, name) {
			missing = append(missing, name)
		}
	}
	for _, name := range commands {
		if p.TopLevel[name] == 0 {
			unsent = append(unsent, name)
		}
	}
	var why []string
	if len(missing) > 0 {
		why = append(why, "also sent "+strings.Join(missing, ", "))
	}
	if len(unsent) > 0 {
		why = append(why, "never sent "+strings.Join(unsent, ", "))
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("its top-level commands are not %s: it %s", strings.Join(commands, ", "), strings.Join(why, " and "))
}

// Rate returns n per second of the phase, or 0 for a phase of no time.
func (p Phase) Rate(n int64) float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(n) / p.Elapsed.Seconds()
}

// Measure runs load between a CONFIG RESETSTAT and a read of INFO
// commandstats, and returns the phase with the operations load reports
// and the commands the load client sent meanwhile.
func (e *Env) Measure(ctx context.Context, load func() (int64, error)) (Phase, error) {
	if err := ResetStats(ctx, e.Admin); err != nil {
		return Phase{}, err
	}
	sent, trips, top := e.Hook.Sent(), e.Hook.Trips(), e.Hook.TopLevel()
	start := time.Now()
	ops, err := load()
	elapsed := time.Since(start)
	if err != nil {
		return Phase{}, err
	}
	stats, err := ReadStats(ctx, e.Admin)
	if err != nil {
		return Phase{}, err
	}
	ph := Phase{Ops: ops, Elapsed: elapsed, Sent: e.Hook.Sent() - sent, Trips: e.Hook.Trips() - trips, Server: stats, TopLevel: e.Hook.TopLevel()}
	for name, n := range top {
		if ph.TopLevel[name] -= n; ph.TopLevel[name] == 0 {
			delete(ph.TopLevel, name)
		}
	}
	return ph, nil
}

// MeasureDrive is Measure of Drive: it calls op as Drive does, within b,
// and returns the phase, whose operations are the calls that succeeded.
func (e *Env) MeasureDrive(ctx context.Context, b Bounds, op func(ctx context.Context, w int) error) (Phase, error) {
	return e.Measure(ctx, func() (int64, error) {
		return Drive(ctx, b, op)
	})
}
