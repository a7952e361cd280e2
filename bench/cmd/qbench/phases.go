package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/bench/internal/queues"
)

// A tripleResult is one variant's push, poll and ack phases, summed over
// rounds.
type tripleResult struct {
	name     string
	commands []string // top-level commands its client sent, SetupCommands aside
	harness.Phase
}

// usecPerMessage returns the server time of the variant's top-level
// commands per message taken, in µs.
func (r tripleResult) usecPerMessage() float64 {
	return harness.Ratio(r.Server.Usec(r.commands...), r.Ops)
}

// runTriples runs every variant's triple phase b.Rounds times, the
// variants taking turns in every round, so that a drift in the machine's
// speed falls on all of them alike.
func (b *bench) runTriples(ctx context.Context) ([]tripleResult, error) {
	variants := b.tripleVariants()
	results := make([]tripleResult, len(variants))
	for range b.Rounds {
		for i, v := range variants {
			ph, err := b.triplePhase(ctx, v, b.Bounds(b.producers), true)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v.name, err)
			}
			results[i].name = v.name
			results[i].Phase = results[i].Phase.Add(ph)
		}
	}
	for i := range results {
		r := &results[i]
		for _, name := range slices.Sorted(maps.Keys(r.TopLevel)) {
			if r.TopLevel[name] > 0 && !slices.Contains(harness.SetupCommands, name) {
				r.commands = append(r.commands, name)
			}
		}
	}
	return results, nil
}

// triplePhase is one measured phase of v (see queues.Triples): its
// b.consumers consumers start, then bounds.Workers producers push messages
// due at once, within bounds and never more than b.backlog ahead of the
// consumers, and the phase ends when every message pushed has been taken,
// within Grace of the producers' end. Its operations are the messages
// taken. When check is set, a variant with commands must have sent
// exactly those.
func (b *bench) triplePhase(ctx context.Context, v variant, bounds harness.Bounds, check bool) (harness.Phase, error) {
	push := func(ctx context.Context, payload []byte) error { return v.push(ctx, payload, 0) }
	ph, err := queues.Triples(ctx, b.Measure, v.start, push, b.consumers, b.backlog, bounds)
	if err == nil && check && v.commands != nil {
		err = ph.CheckCommands(v.commands)
	}
	return ph, err
}

// A latencyResult is one variant's latency phase.
type latencyResult struct {
	name      string
	latency   harness.Timings // delivery time less due time, of each task's first delivery
	delivered int             // tasks delivered
	repeats   int64           // deliveries of a task delivered already
	pushSpan  time.Duration   // from the first push to the last push's reply
}

// runLatencies runs every variant's latency phase, one after another.
func (b *bench) runLatencies(ctx context.Context) ([]latencyResult, error) {
	var results []latencyResult
	for _, v := range b.latencyVariants() {
		r, err := b.latencyPhase(ctx, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		results = append(results, r)
	}
	return results, nil
}

// latencyPhase starts v's consumers, has b.producers goroutines push
// b.tasks tasks as fast as they go, each due b.due after its push began,
// and records each task's delivery time less its due time as its handler
// begins, until every task is delivered or b.latencyTimeout has passed.
func (b *bench) latencyPhase(ctx context.Context, v variant) (latencyResult, error) {
	r := latencyResult{name: v.name}
	lat := make([]time.Duration, b.tasks)
	seen := make([]atomic.Bool, b.tasks)
	var delivered, repeats atomic.Int64
	all := make(chan struct{})
	stop, err := v.start(ctx, b.consumers, func(p []byte) {
		now := time.Now()
		i, due, ok := unstamp(p)
		if !ok || i >= len(seen) {
			return
		}
		if seen[i].Swap(true) {
			repeats.Add(1)
			return
		}
		lat[i] = now.Sub(due)
		if delivered.Add(1) == int64(len(seen)) {
			close(all)
		}
	})
	if err != nil {
		return r, err
	}
	var next atomic.Int64
	start := time.Now()
	_, err = harness.Drive(ctx, harness.Bounds{Workers: b.producers, Duration: b.latencyTimeout, MaxOps: int64(b.tasks)}, func(ctx context.Context, w int) error {
		i := int(next.Add(1) - 1)
		due := time.Now().Add(b.due)
		return v.push(ctx, stamp(i, due), b.due)
	})
	r.pushSpan = time.Since(start)
	if err == nil {
		timer := time.NewTimer(max(b.latencyTimeout-r.pushSpan, 0))
		select {
		case <-all:
		case <-timer.C:
		case <-ctx.Done():
			err = ctx.Err()
		}
		timer.Stop()
	}
	err = errors.Join(err, stop())
	r.delivered, r.repeats = int(delivered.Load()), repeats.Load()
	var got []time.Duration
	for i := range seen {
		if seen[i].Load() {
			got = append(got, lat[i])
		}
	}
	r.latency = harness.Timings{got}
	return r, err
}

// cleanup takes the run's asynq queues off asynq's list of queues, a key
// outside the run's prefix; Env.Close deletes every other key of the run.
func (b *bench) cleanup(ctx context.Context) error {
	var qs []any
	for _, k := range []string{"asynq-triples", "asynq-latency-default", "asynq-latency-fast"} {
		qs = append(qs, b.Key(k))
	}
	return b.Admin.SRem(ctx, "asynq:queues", qs...).Err()
}
