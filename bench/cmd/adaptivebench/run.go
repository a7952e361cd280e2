package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// The variants, in the order they run and are reported.
const (
	nameAdaptive    = "adaptive"
	nameStatic      = "static"
	namePerInstance = "per instance"
)

var variantNames = []string{nameAdaptive, nameStatic, namePerInstance}

// The variants of -queue.
const (
	nameLatency   = "latency"
	nameDropsOnly = "drops only"
)

var queueVariantNames = []string{nameLatency, nameDropsOnly, nameStatic, namePerInstance}

// variants returns the names of the variants the run makes.
func (b *bench) variants() []string {
	if b.queue {
		return queueVariantNames
	}
	return variantNames
}

// The adaptive limits' bounds, the shared one's and each in-process one's.
const (
	limitMin, limitMax, limitInitial = 1, 100, 10
	leaseTTL                         = 10 * time.Second
)

// A sample is the state of a run at one moment.
type sample struct {
	at       time.Duration // since the run began
	capacity int64
	limit    int64         // the shared limit, or the sum of the instances'
	calling  int64         // calls in flight, served or being turned away
	latency  time.Duration // -queue: the mean latency of the calls done since the last sample; 0: none
}

// A phase is the figures of one capacity's phase of a run.
type phase struct {
	capacity   int64
	successes  int64
	drops      int64
	length     time.Duration
	limitSum   float64 // over the phase's samples
	callingSum float64
	samples    int
	p50, p99   time.Duration // -queue: of the calls to the system made in the phase
}

func (p phase) meanLimit() float64   { return harness.Div(p.limitSum, float64(p.samples)) }
func (p phase) meanCalling() float64 { return harness.Div(p.callingSum, float64(p.samples)) }
func (p phase) goodput() float64     { return float64(p.successes) / p.length.Seconds() }
func (p phase) dropRate() float64    { return harness.Ratio(p.drops, p.successes+p.drops) }

// ideal is the most successes a second the phase's capacity allows.
func (p phase) ideal(callTime time.Duration) float64 {
	return float64(p.capacity) / callTime.Seconds()
}

// A run is one variant's figures.
type run struct {
	name    string
	samples []sample
	phases  []phase
}

// setup checks the settings and notes the machine's load.
func (b *bench) setup(ctx context.Context) error {
	if err := b.check(); err != nil {
		return err
	}
	b.load[0] = loadAverage()
	return nil
}

// loadAverage returns the 1-minute load average, or "?".
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// runAll runs every variant at once, each through a system of its own.
func (b *bench) runAll(ctx context.Context) error {
	names := b.variants()
	variants := make([]*variant, len(names))
	for i, name := range names {
		v, err := b.newVariant(ctx, name)
		if err != nil {
			return err
		}
		variants[i] = v
	}
	b.runs = make([]run, len(variants))
	errs := make([]error, len(variants))
	var wg sync.WaitGroup
	for i, v := range variants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.runs[i], errs[i] = b.drive(ctx, v)
		}()
	}
	wg.Wait()
	b.load[1] = loadAverage()
	return errors.Join(errs...)
}

// clients returns one client per instance, each with a pool of its own.
func (b *bench) clients() []*redis.Client {
	clients := make([]*redis.Client, b.instances)
	for i := range clients {
		clients[i], _ = b.NewClient(b.callers/b.instances + 8)
	}
	return clients
}

// newVariant makes the variant name: its limiters, one per instance.
func (b *bench) newVariant(ctx context.Context, name string) (*variant, error) {
	v := &variant{name: name, stop: func() {}}
	switch name {
	case nameAdaptive, nameLatency, nameDropsOnly:
		key := b.Key(strings.ReplaceAll(name, " ", "-"))
		var tolerance float64
		if name == nameLatency {
			tolerance = b.tolerance
		}
		var limiters []*adaptive.Limiter
		for _, c := range b.clients() {
			l, err := adaptive.New(c, adaptive.Config{Key: key, Min: limitMin, Max: limitMax, Initial: limitInitial, TTL: leaseTTL, RTTTolerance: tolerance})
			if err != nil {
				return nil, err
			}
			limiters = append(limiters, l)
		}
		v.acquire = func(ctx context.Context, i int) (func(outcome), error) {
			slot, err := limiters[i].Acquire(ctx)
			if err != nil {
				return nil, err
			}
			return func(o outcome) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if o == success {
					slot.Success(ctx)
				} else {
					slot.Dropped(ctx)
				}
			}, nil
		}
		v.limit = limiters[0].Limit
	case nameStatic:
		key := b.Key("static")
		var limiters []*slotlimit.Limiter
		for _, c := range b.clients() {
			l, err := slotlimit.New(c, slotlimit.Config{Key: key, Limit: b.static, TTL: leaseTTL})
			if err != nil {
				return nil, err
			}
			limiters = append(limiters, l)
		}
		v.acquire = func(ctx context.Context, i int) (func(outcome), error) {
			holder := slotlimit.NewHolderID()
			if _, err := limiters[i].Acquire(ctx, holder); err != nil {
				return nil, err
			}
			return func(outcome) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				limiters[i].Release(ctx, holder)
			}, nil
		}
		v.limit = func(context.Context) (int64, error) { return b.static, nil }
	case namePerInstance:
		local := make([]*aimd, b.instances)
		for i := range local {
			local[i] = newAIMD(limitMin, limitMax, limitInitial, adaptive.DefaultStep, adaptive.DefaultFactor, adaptive.DefaultWindow)
			if b.queue {
				local[i].lat.tolerance = b.tolerance
			}
		}
		v.acquire = func(ctx context.Context, i int) (func(outcome), error) {
			granted, ok := local[i].acquire()
			if !ok {
				return nil, context.Canceled
			}
			return func(o outcome) { local[i].release(o, granted) }, nil
		}
		v.limit = func(context.Context) (int64, error) {
			var sum int64
			for _, a := range local {
				sum += a.current()
			}
			return sum, nil
		}
		v.stop = func() {
			for _, a := range local {
				a.stop()
			}
		}
	default:
		return nil, fmt.Errorf("no variant %q", name)
	}
	return v, nil
}

// drive runs the phases through v: the callers call the system without
// pause while a sampler moves its capacity at each phase's start and
// samples the limit and the calls in flight.
func (b *bench) drive(ctx context.Context, v *variant) (run, error) {
	var sys callee
	if b.queue {
		sys = newQueueSystem(b.callTime, b.callerTimeout, b.capacities[0])
	} else {
		drop := &system{callTime: b.callTime, timeout: b.timeout}
		drop.capacity.Store(b.capacities[0])
		sys = dropSystem{drop}
	}
	n := len(b.capacities)
	total := time.Duration(n) * b.phase
	successes := make([]atomic.Int64, n)
	drops := make([]atomic.Int64, n)
	latencies := make([]harness.Timings, n)
	for i := range latencies {
		latencies[i] = harness.NewTimings(b.callers)
	}
	var latencySum, latencyCount atomic.Int64 // since the last sample

	ctx, cancel := context.WithTimeout(ctx, total+harness.Grace)
	defer cancel()
	start := time.Now()
	end := start.Add(total)
	phaseAt := func(t time.Time) int {
		return min(max(int(t.Sub(start)/b.phase), 0), n-1)
	}
	var stop atomic.Bool
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for w := range b.callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				release, err := v.acquire(ctx, w%b.instances)
				if err != nil {
					if !stop.Load() && ctx.Err() == nil {
						once.Do(func() { first = err })
						stop.Store(true)
					}
					return
				}
				took, served := sys.serve()
				now := time.Now()
				if served {
					release(success)
				} else {
					release(dropped)
				}
				if now.After(end) {
					continue
				}
				latencies[phaseAt(now.Add(-took))].Add(w, took) // in the phase the call was made in
				latencySum.Add(int64(took))
				latencyCount.Add(1)
				if served {
					successes[phaseAt(now)].Add(1)
				} else {
					drops[phaseAt(now)].Add(1)
				}
			}
		}()
	}

	r := run{name: v.name}
	ticker := time.NewTicker(b.sample)
	for now := time.Now(); now.Before(end) && !stop.Load(); now = <-ticker.C {
		i := phaseAt(now)
		sys.setCapacity(b.capacities[i])
		limit, err := v.limit(ctx)
		if err != nil {
			once.Do(func() { first = err })
			break
		}
		var mean time.Duration
		if count := latencyCount.Swap(0); count > 0 {
			mean = time.Duration(latencySum.Swap(0) / count)
		}
		r.samples = append(r.samples, sample{at: now.Sub(start), capacity: b.capacities[i], limit: limit, calling: sys.inFlight(), latency: mean})
	}
	ticker.Stop()
	stop.Store(true)
	v.stop()
	cancel()
	wg.Wait()
	if first != nil {
		return run{}, fmt.Errorf("%s: %w", v.name, first)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && time.Since(start) > total+harness.Grace {
		return run{}, fmt.Errorf("%s: the callers did not stop", v.name)
	}

	r.phases = make([]phase, n)
	for i := range r.phases {
		r.phases[i] = phase{capacity: b.capacities[i], successes: successes[i].Load(), drops: drops[i].Load(), length: b.phase}
		if latencies[i].Len() > 0 {
			q := latencies[i].Quantiles(0.5, 0.99)
			r.phases[i].p50, r.phases[i].p99 = q[0], q[1]
		}
	}
	for _, s := range r.samples {
		p := &r.phases[min(int(s.at/b.phase), n-1)]
		p.limitSum += float64(s.limit)
		p.callingSum += float64(s.calling)
		p.samples++
	}
	return r, nil
}
