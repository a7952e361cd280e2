package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/slotlimit/slotlimit"
)

// A scriptCost is the server time of one script, run alone in its phase.
type scriptCost struct {
	script string
	load   string
	full   bool // a key at its limit, every try refused
	phase
	command string // the command INFO commandstats counts it under
}

func (c scriptCost) usecPerCall() float64 {
	return c.server.perCall(c.command)
}

// scriptCosts measures each script in a phase of its own, since INFO
// commandstats sums every script under evalsha. Takes go to keys of 60
// slots, one key after another per worker, so that a take meets 0 to 59
// holders; the gives then empty the same keys in the same order. The full
// key phases are the server-cost budget's: every try is refused.
func (b *bench) scriptCosts(ctx context.Context) ([]scriptCost, error) {
	var costs []scriptCost
	run := func(name, load string, full bool, workers int, d time.Duration, maxOps int64, op func(ctx context.Context, w int) error) error {
		ph, err := b.measure(ctx, func() (int64, error) {
			return drive(ctx, workers, d, maxOps, op)
		})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		costs = append(costs, scriptCost{script: name, load: load, full: full, phase: ph, command: "evalsha"})
		return nil
	}

	// The library's acquire then release, each lease new, then released.
	type take struct {
		l      *slotlimit.Limiter
		holder string
	}
	holders := ids(holderForm, areaLimit)
	taken := make([][]take, b.workers)
	err := run("library acquire", "new lease on a key of 0-59 holders", false, b.workers, b.duration, b.maxOps,
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
	err = run("library release", "live lease; the keys empty", false, b.workers, b.duration*10, int64(len(all)),
		func(ctx context.Context, w int) error {
			t := all[next.Add(1)-1]
			ok, err := t.l.Release(ctx, t.holder)
			if err == nil && !ok {
				err = errors.New("no lease to release")
			}
			return err
		})
	if err != nil {
		return nil, err
	}

	// The seed's scripts on counters of limit 60, likewise.
	seedKeys := make([][]string, b.workers)
	limit := strconv.Itoa(areaLimit)
	err = run("seed acquire", "granted; counter at 0-59", false, b.workers, b.duration, b.maxOps,
		func(ctx context.Context, w int) error {
			n := len(seedKeys[w])
			key := fmt.Sprintf("%ssplit:seed:%d:%d", b.prefix, w, n/areaLimit)
			got, err := b.client.EvalSha(ctx, b.scripts.seedAcquire.sha, []string{key}, limit).Int64()
			if err == nil && got != int64(n%areaLimit+1) {
				err = fmt.Errorf("seed acquire: count %d, want %d", got, n%areaLimit+1)
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
	err = run("seed release", "counter at 1-60", false, b.workers, b.duration*10, int64(len(counters)),
		func(ctx context.Context, w int) error {
			key := counters[next.Add(1)-1]
			return b.client.EvalSha(ctx, b.scripts.seedRelease.sha, []string{key}).Err()
		})
	if err != nil {
		return nil, err
	}
	if err := b.del(ctx, counters...); err != nil {
		return nil, err
	}

	// Full key, every try refused: the library's acquire ...
	full := b.limiter("full:lease", areaLimit, leaseTTL)
	for _, h := range holders {
		if res, err := full.TryAcquire(ctx, h); err != nil || !res.Acquired {
			return nil, fmt.Errorf("filling the full key: %v, %+v", err, res)
		}
	}
	others := ids("other-%d", b.workers)
	err = run("library acquire", "full key (60 of 60), refused", true, b.workers, b.duration, b.maxOps,
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
	refusal, _, err := capture(ctx, b.addr, full.Config(), others[0])
	if err != nil {
		return nil, err
	}
	if err := b.client.ScriptLoad(ctx, b.scripts.twoReads.src).Err(); err != nil {
		return nil, err
	}
	err = run(nameTwoReads, "full key (60 of 60), refused", true, b.workers, b.duration, b.maxOps,
		func(ctx context.Context, w int) error {
			a := refusal.argv
			got, err := b.client.EvalSha(ctx, b.scripts.twoReads.sha, refusal.keys, a[0], a[1], a[2], others[w]).Int64()
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

	// ... and the seed's, on a counter at its limit.
	counter := []string{b.prefix + "full:seed"}
	for range areaLimit {
		if err := b.client.EvalSha(ctx, b.scripts.seedAcquire.sha, counter, limit).Err(); err != nil {
			return nil, err
		}
	}
	err = run("seed acquire", "full counter (60 of 60), refused", true, b.workers, b.duration, b.maxOps,
		func(ctx context.Context, w int) error {
			got, err := b.client.EvalSha(ctx, b.scripts.seedAcquire.sha, counter, limit).Int64()
			if err == nil && got != areaLimit {
				err = fmt.Errorf("seed acquire on a full counter: count %d", got)
			}
			return err
		})
	if err != nil {
		return nil, err
	}
	if err := b.del(ctx, counter...); err != nil {
		return nil, err
	}
	return costs, nil
}

// del deletes keys, a thousand to a round trip.
func (b *bench) del(ctx context.Context, keys ...string) error {
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		if err := b.admin.Del(ctx, keys[:n]...).Err(); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}
