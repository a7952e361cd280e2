package harness

import (
	"context"
	"time"
)

// A Pairer takes something for worker w and gives it back: a slot, a
// lock. Each worker takes and gives back its own, so a Pairer's calls for
// different workers may run at once.
type Pairer struct {
	Name     string
	Commands []string // the top-level commands it sends, as INFO commandstats names them
	Acquire  func(ctx context.Context, w int) error
	Release  func(ctx context.Context, w int) error
}

// A PairResult is one Pairer's load, summed over rounds: the phases, and
// the latency of each call as its caller saw it.
type PairResult struct {
	Name     string
	Commands []string // as the Pairer's
	Phase
	Acquire, Release Timings
}

// NewPairResult returns an empty PairResult for load on workers
// goroutines.
func NewPairResult(name string, commands []string, workers int) PairResult {
	return PairResult{Name: name, Commands: commands, Acquire: NewTimings(workers), Release: NewTimings(workers)}
}

// ServerUsecPerPair returns the server time of the pairer's own commands
// per pair, in µs.
func (r PairResult) ServerUsecPerPair() float64 {
	return Ratio(r.Server.Usec(r.Commands...), r.Ops)
}

// CommandsPerPair returns the commands the load client sent per pair.
func (r PairResult) CommandsPerPair() float64 {
	return Ratio(r.Sent, r.Ops)
}

// PairsPerSecond returns the pairs completed per second of load.
func (r PairResult) PairsPerSecond() float64 {
	return r.Rate(r.Ops)
}

// RunPairs runs each pairer as RunCalls runs a Caller whose call is an
// acquire then a release: on workers goroutines for e.Rounds rounds, the
// pairers taking turns in every round, so that a drift in the machine's
// speed falls on all of them alike. It returns one PairResult per pairer,
// in order. A pairer's call that fails ends the run with its error, and so
// does a phase whose top-level commands are not the pairer's Commands.
func (e *Env) RunPairs(ctx context.Context, pairers []Pairer, workers int) ([]PairResult, error) {
	results := make([]PairResult, len(pairers))
	callers := make([]Caller, len(pairers))
	for i, p := range pairers {
		r := &results[i]
		*r = NewPairResult(p.Name, p.Commands, workers)
		callers[i] = Caller{Name: p.Name, Commands: p.Commands, Call: func(ctx context.Context, w int) error {
			t0 := time.Now()
			if err := p.Acquire(ctx, w); err != nil {
				return err
			}
			t1 := time.Now()
			if err := p.Release(ctx, w); err != nil {
				return err
			}
			r.Acquire.Add(w, t1.Sub(t0))
			r.Release.Add(w, time.Since(t1))
			return nil
		}}
	}
	calls, err := e.RunCalls(ctx, callers, workers)
	if err != nil {
		return nil, err
	}
	for i, c := range calls {
		results[i].Phase = c.Phase
	}
	return results, nil
}
