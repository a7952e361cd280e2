package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// A scriptCost is the server time of one script, run alone in its phase.
type scriptCost struct {
	script string
	load   string
	full   bool // a key at its limit, every try refused
	harness.Phase
	command string // the command INFO commandstats counts it under
}

func (c scriptCost) usecPerCall() float64 {
	return c.Server.PerCall(c.command)
}

// scriptCosts measures each script in a phase of its own, since INFO
// commandstats sums every script under evalsha. Takes go to keys of 60
// slots, one key after another per worker, so that a take meets 0 to 59
// holders; the gives then empty the same keys in the same order. The full
// key phases are the refusal target's: every try is refused.
func (b *bench) scriptCosts(ctx context.Context) ([]scriptCost, error) {
	var costs []scriptCost
	run := func(name, load string, full bool, bounds harness.Bounds, op func(ctx context.Context, w int) error) error {
		ph, err := b.Measure(ctx, func() (int64, error) {
			return harness.Drive(ctx, bounds, op)
		})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		costs = append(costs, scriptCost{script: name, load: load, full: full, Phase: ph, command: "evalsha"})
		return nil
	}
	// The gives undo exactly the takes before them: as many as there
	// were, in at most ten times the takes' time.
	undo := func(n int) harness.Bounds {
		return harness.Bounds{Workers: b.Workers, Duration: 10 * b.Duration, MaxOps: int64(n)}
	}

	// The library's acquire then release, each lease new, then released.
	type take struct {
		l      *slotlimit.Limiter
		holder string
	}
	holders := ids(holderForm, areaLimit)
	taken := make([][]take, b.Workers)
	err := run(nameLibAcquire, "new lease on a key of 0-59 holders", false, b.Bounds(b.Workers),
		func(ctx context.Context, w int) error {
			n := len(taken[w])
			var l *slotlimit.Limiter
			if n%areaLimit == 0 {
				l = b.limiter(fmt.Sprintf("split:lease:%d:%d", w, n/areaLimit), areaLimit, leaseTTL)
			} else {
				l = taken[w][n-1].l
			}
			t := take{l, holders[n%areaLimit]}
			res, err := l.TryAcquire(ctx, t.holder)
			if err == nil && !res.Acquired {
				err = errors.New("refused")
			}
			if err != nil {
				return err
			}
			taken[w] = append(taken[w], t)
			return nil
		})
	if err != nil {
		return nil, err
	}
	var all []take
	for _, t := range taken {
		all = append(all, t...)
	}
	var next atomic.Int64
	err = run(nameLibRelease, "live lease; the keys empty", false, undo(len(all)),
		func(ctx context.Context, w int) error {
			t := all[next.Add(1)-1]
			return t.l.Release(ctx, t.holder)
		})
	if err != nil {
		return nil, err
	}

	// The classic scripts on counters of limit 60, likewise.
	seedKeys := make([][]string, b.Workers)
	limit := strconv.Itoa(areaLimit)
	err = run(nameSeedAcquire, "granted; counter at 0-59", false, b.Bounds(b.Workers),
		func(ctx context.Context, w int) error {
			n := len(seedKeys[w])
			key := b.Key(fmt.Sprintf("split:seed:%d:%d", w, n/areaLimit))
			got, err := b.Client.EvalSha(ctx, b.scripts.seedAcquire.SHA, []string{key}, limit).Int64()
			if err == nil && got != int64(n%areaLimit+1) {
				err = fmt.Errorf("classic acquire: count %d, want %d", got, n%areaLimit+1)
			}
			if err != nil {
				return err
			}
			seedKeys[w] = append(seedKeys[w], key)
			return nil
		})
	if err != nil {
		return nil, err
	}
	var counters []string
	for _, k := range seedKeys {
		counters = append(counters, k...)
	}
	next.Store(0)
	err = run(nameSeedRelease, "counter at 1-60", false, undo(len(counters)),
		func(ctx context.Context, w int) error {
			key := counters[next.Add(1)-1]
			return b.Client.EvalSha(ctx, b.scripts.seedRelease.SHA, []string{key}).Err()
		})
	if err != nil {
		return nil, err
	}
	if err := b.Del(ctx, counters...); err != nil {
		return nil, err
	}

	// Full key, every try refused: the library's acquire ...
	full := b.limiter("full:lease", areaLimit, leaseTTL)
	for _, h := range holders {
		if res, err := full.TryAcquire(ctx, h); err != nil || !res.Acquired {
			return nil, fmt.Errorf("filling the full key: %v, %+v", err, res)
		}
	}
	others := ids("other-%d", b.Workers)
	err = run(nameLibAcquire, "full key (60 of 60), refused", true, b.Bounds(b.Workers),
		func(ctx context.Context, w int) error {
			res, err := full.TryAcquire(ctx, others[w])
			if err == nil && res.Acquired {
				err = errors.New("a full key granted a slot")
			}
			return err
		})
	if err != nil {
		return nil, err
	}
	// ... and the two reads that refusal makes, alone in a script, with
	// the same keys and arguments: the least a refusal can cost while a
	// holder asking again renews its lease.
	refusal, _, err := capture(ctx, b.Env, full.Config(), others[0])
	if err != nil {
		return nil, err
	}
	if err := b.scripts.twoReads.Load(ctx, b.Client); err != nil {
		return nil, err
	}
	err = run(nameTwoReads, "full key (60 of 60), refused", true, b.Bounds(b.Workers),
		func(ctx context.Context, w int) error {
			a := refusal.Argv
			got, err := b.Client.EvalSha(ctx, b.scripts.twoReads.SHA, refusal.Keys, a[0], a[1], a[2], others[w]).Int64()
			if err == nil && got >= 0 {
				err = errors.New("the two reads found no full marker")
			}
			return err
		})
	if err != nil {
		return nil, err
	}
	if _, err := full.ReleaseBatch(ctx, holders); err != nil {
		return nil, err
	}

	// ... and the classic, on a counter at its limit.
	counter := []string{b.Key("full:seed")}
	for range areaLimit {
		if err := b.Client.EvalSha(ctx, b.scripts.seedAcquire.SHA, counter, limit).Err(); err != nil {
			return nil, err
		}
	}
	err = run(nameSeedAcquire, "full counter (60 of 60), refused", true, b.Bounds(b.Workers),
		func(ctx context.Context, w int) error {
			got, err := b.Client.EvalSha(ctx, b.scripts.seedAcquire.SHA, counter, limit).Int64()
			if err == nil && got != areaLimit {
				err = fmt.Errorf("classic acquire on a full counter: count %d", got)
			}
			return err
		})
	if err != nil {
		return nil, err
	}
	if err := b.Del(ctx, counter...); err != nil {
		return nil, err
	}
	return costs, nil
}
