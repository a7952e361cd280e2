// Command adaptive puts a shared adaptive concurrency limit in front of a
// system whose capacity moves, and checks itself.
//
// A partner API takes 12 concurrent calls, then 4 (an incident), then 16
// (more servers). A call past its capacity is refused at once, as a 503
// would be. Two instances of a service (two Limiters on one key, as two
// processes would have) run 12 workers each, which call the API as fast
// as their slots allow and report each call: Success, or Dropped when the
// API refused it. The limit, kept in Redis and moved by both instances'
// reports, follows the capacity. The program prints it four times a
// second beside the capacity, and ends with a verdict, PASS or FAIL: in
// the last second of each phase the limit was near the capacity and the
// API refused only a few calls (most refusals come while the limit comes
// down after the capacity fell), the limit went down with the capacity
// and up again, and both instances were served. It exits 1 on FAIL.
//
// By default it runs on an embedded miniredis; -redis host:port runs it
// against a real server (loopback only).
//
//	go run ./examples/adaptive
//	go run ./examples/adaptive -redis 127.0.0.1:6379
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/exampleredis"
)

// A phase is a time during which the API takes capacity concurrent calls.
type phase struct {
	capacity int64
	length   time.Duration
}

var phases = []phase{{12, 2500 * time.Millisecond}, {4, 2500 * time.Millisecond}, {16, 3 * time.Second}}

const (
	instances = 2
	workers   = 12 // per instance

	// maxSettledRefusals is the most calls the API may refuse in the last
	// second of a phase, once the limit has settled near the capacity:
	// a few a second, as the limit probes one slot above it.
	maxSettledRefusals = 15
)

func main() {
	log.SetFlags(0)
	addr := flag.String("redis", "", "Redis `host:port` (loopback); empty runs an embedded miniredis")
	flag.Parse()
	if err := run(*addr, os.Stdout); err != nil {
		log.Printf("FAIL: %v", err)
		os.Exit(1)
	}
}

// errOverloaded is the API's refusal of a call past its capacity.
var errOverloaded = errors.New("503 overloaded")

// api is the partner API: it serves up to capacity calls at once, each in
// 80 to 120 ms, and refuses any more within 5 ms.
type api struct {
	capacity atomic.Int64
	inFlight atomic.Int64
}

func (a *api) call(ctx context.Context) error {
	n := a.inFlight.Add(1)
	defer a.inFlight.Add(-1)
	if n > a.capacity.Load() {
		if err := sleep(ctx, 5*time.Millisecond); err != nil {
			return err
		}
		return errOverloaded
	}
	return sleep(ctx, 80*time.Millisecond+rand.N(40*time.Millisecond))
}

// sleep waits for d, or returns ctx's error if it ends first.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// tally counts the calls of one phase.
type tally struct {
	ok, refused [instances]atomic.Int64
	lastRefused atomic.Int64 // calls refused in the phase's last second
	limits      []int64      // the limit, sampled in the phase's last second
}

func run(addr string, out io.Writer) error {
	addr, stop, err := exampleredis.Open(addr)
	if err != nil {
		return err
	}
	defer stop()
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := fmt.Sprintf("example:adaptive:partner-api:%d", time.Now().UnixNano())

	cfg := adaptive.Config{Key: key, Min: 1, Max: 32, Initial: 4, TTL: 10 * time.Second}
	var limiters [instances]*adaptive.Limiter
	for i := range limiters {
		if limiters[i], err = adaptive.New(client, cfg); err != nil {
			return err
		}
	}
	defer func() { // the limit's keys, beside the key
		side := "{" + key + "}/adaptive"
		client.Del(context.Background(), side, side+":leases", side+":q", side+":qd", side+":qw")
	}()
	fmt.Fprintf(out, "%s, %d instances of %d workers\n", limiters[0].Config(), instances, workers)

	gateway := &api{}
	gateway.capacity.Store(phases[0].capacity)
	tallies := make([]tally, len(phases))
	var current atomic.Int64 // the phase now
	var settled atomic.Bool  // in the phase's last second

	work, stopWork := context.WithCancel(ctx)
	defer stopWork()
	var wg sync.WaitGroup
	errs := make(chan error, instances*workers)
	for i := range instances * workers {
		instance := i % instances
		l := limiters[instance]
		wg.Go(func() {
			for {
				s, err := l.Acquire(work) // waits for a slot, woken when one is freed
				if err != nil {
					if work.Err() == nil {
						errs <- fmt.Errorf("instance %d: %w", instance, err)
					}
					return
				}
				t := &tallies[current.Load()]
				err = gateway.call(work)
				release := context.WithoutCancel(work)
				switch {
				case work.Err() != nil: // the run is over: the call tells nothing
					s.Ignore(release) //nolint:errcheck // the last call of the run
					return
				case errors.Is(err, errOverloaded):
					t.refused[instance].Add(1)
					if settled.Load() {
						t.lastRefused.Add(1)
					}
					err = s.Dropped(release)
				default:
					t.ok[instance].Add(1)
					err = s.Success(release)
				}
				if err != nil {
					errs <- fmt.Errorf("instance %d: %w", instance, err)
					return
				}
			}
		})
	}

	start := time.Now()
	fmt.Fprintf(out, "%6s %9s %6s %10s\n", "time", "capacity", "limit", "in flight")
	ticker := time.NewTicker(250 * time.Millisecond)
	defer ticker.Stop()
	phaseEnd := start
	for p, ph := range phases {
		settled.Store(false)
		current.Store(int64(p))
		gateway.capacity.Store(ph.capacity)
		phaseEnd = phaseEnd.Add(ph.length)
		for time.Now().Before(phaseEnd) {
			select {
			case err := <-errs:
				stopWork()
				wg.Wait()
				return err
			case <-ticker.C:
			}
			limit, err := limiters[1].Limit(ctx)
			if err != nil {
				stopWork()
				wg.Wait()
				return err
			}
			if time.Until(phaseEnd) < time.Second {
				settled.Store(true)
				tallies[p].limits = append(tallies[p].limits, limit)
			}
			fmt.Fprintf(out, "%5.2fs %9d %6d %10d\n", time.Since(start).Seconds(), ph.capacity, limit, gateway.inFlight.Load())
		}
	}
	stopWork()
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return verdict(out, tallies)
}

// verdict prints each phase's tally and checks it.
func verdict(out io.Writer, tallies []tally) error {
	var problems []error
	var means []float64
	var ok, refused [instances]int64
	for p := range tallies {
		t := &tallies[p]
		c := phases[p].capacity
		var sum int64
		for _, limit := range t.limits {
			sum += limit
		}
		mean := float64(sum) / float64(max(len(t.limits), 1))
		means = append(means, mean)
		var phaseOK, phaseRefused int64
		for i := range instances {
			ok[i] += t.ok[i].Load()
			refused[i] += t.refused[i].Load()
			phaseOK += t.ok[i].Load()
			phaseRefused += t.refused[i].Load()
		}
		fmt.Fprintf(out, "phase %d: capacity %d, limit %.1f on average in its last second; %d calls served, %d refused by the API (%d in its last second)\n",
			p+1, c, mean, phaseOK, phaseRefused, t.lastRefused.Load())
		if n := t.lastRefused.Load(); n > maxSettledRefusals {
			problems = append(problems, fmt.Errorf("phase %d: the API refused %d calls in its last second, want at most %d", p+1, n, maxSettledRefusals))
		}
		if low, high := float64(c)/2, float64(c)*3/2+2; mean < low || mean > high {
			problems = append(problems, fmt.Errorf("phase %d: the limit was %.1f on average, want %.1f to %.1f for a capacity of %d", p+1, mean, low, high, c))
		}
	}
	for p := 1; p < len(phases); p++ {
		if (phases[p].capacity < phases[p-1].capacity) != (means[p] < means[p-1]) {
			problems = append(problems, fmt.Errorf("phase %d: the limit moved from %.1f to %.1f, the capacity from %d to %d", p+1, means[p-1], means[p], phases[p-1].capacity, phases[p].capacity))
		}
	}
	var all, drops int64
	for i := range instances {
		if ok[i] == 0 {
			problems = append(problems, fmt.Errorf("instance %d was never served", i))
		}
		all += ok[i] + refused[i]
		drops += refused[i]
	}
	fmt.Fprintf(out, "in all: %d calls, %d refused by the API (%.1f%%, most while the limit came down after the capacity fell); instances served %d and %d\n",
		all, drops, 100*float64(drops)/float64(max(all, 1)), ok[0], ok[1])
	if err := errors.Join(problems...); err != nil {
		return err
	}
	fmt.Fprintln(out, "PASS: the shared limit followed the API's capacity down and up, across both instances, with few calls refused once it settled")
	return nil
}
