package harness

import (
	"context"
	"time"
)

// A Phase is one measured stretch of load, or the sum of several.
type Phase struct {
	Ops     int64         // operations completed: pairs, tries, bursts
	Elapsed time.Duration // wall time of the load
	Sent    int64         // commands the load client sent
	Trips   int64         // the load client's round trips: single commands and pipelines
	Server  Stats         // INFO commandstats over the phase
}

// Add returns the sum of p and q.
func (p Phase) Add(q Phase) Phase {
	return Phase{p.Ops + q.Ops, p.Elapsed + q.Elapsed, p.Sent + q.Sent, p.Trips + q.Trips, p.Server.Add(q.Server)}
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
	sent, trips := e.Hook.Sent(), e.Hook.Trips()
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
	return Phase{Ops: ops, Elapsed: elapsed, Sent: e.Hook.Sent() - sent, Trips: e.Hook.Trips() - trips, Server: stats}, nil
}

// MeasureDrive is Measure of Drive: it calls op as Drive does, within b,
// and returns the phase, whose operations are the calls that succeeded.
func (e *Env) MeasureDrive(ctx context.Context, b Bounds, op func(ctx context.Context, w int) error) (Phase, error) {
	return e.Measure(ctx, func() (int64, error) {
		return Drive(ctx, b, op)
	})
}
