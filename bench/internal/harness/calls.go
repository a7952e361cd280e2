package harness

import (
	"context"
	"fmt"
	"time"
)

// A Caller makes one call for worker w: a rate limiter's Allow, say. Its
// calls for different workers may run at once.
type Caller struct {
	Name     string
	Commands []string // the top-level commands it sends, as INFO commandstats names them
	Call     func(ctx context.Context, w int) error
}

// A CallResult is one Caller's load, summed over rounds: the phases, and
// the latency of each call as its caller saw it.
type CallResult struct {
	Name     string
	Commands []string // as the Caller's
	Phase
	Latency Timings
}

// ServerUsecPerCall returns the server time of the caller's own commands
// per call, in µs.
func (r CallResult) ServerUsecPerCall() float64 {
	return Ratio(r.Server.Usec(r.Commands...), r.Ops)
}

// CommandsPerCall returns the commands the load client sent per call.
func (r CallResult) CommandsPerCall() float64 {
	return Ratio(r.Sent, r.Ops)
}

// CallsPerSecond returns the calls completed per second of load.
func (r CallResult) CallsPerSecond() float64 {
	return r.Rate(r.Ops)
}

// RunCalls runs each caller on workers goroutines for e.Rounds rounds, each
// a measured phase bounded by e.Bounds(workers), the callers taking turns
// in every round, so that a drift in the machine's speed falls on all of
// them alike. It returns one CallResult per caller, in order. A caller's
// call that fails ends the run with its error, and so does a phase whose
// top-level commands are not the caller's Commands (see
// Phase.CheckCommands).
func (e *Env) RunCalls(ctx context.Context, callers []Caller, workers int) ([]CallResult, error) {
	results := make([]CallResult, len(callers))
	for i, c := range callers {
		results[i] = CallResult{Name: c.Name, Commands: c.Commands, Latency: NewTimings(workers)}
	}
	for range e.Rounds {
		for i, c := range callers {
			r := &results[i]
			ph, err := e.MeasureDrive(ctx, e.Bounds(workers), func(ctx context.Context, w int) error {
				t0 := time.Now()
				if err := c.Call(ctx, w); err != nil {
					return err
				}
				r.Latency.Add(w, time.Since(t0))
				return nil
			})
			if err == nil {
				err = ph.CheckCommands(c.Commands)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Name, err)
			}
			r.Phase = r.Phase.Add(ph)
		}
	}
	return results, nil
}
