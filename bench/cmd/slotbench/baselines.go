package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/bench/internal/classic"
	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// The classic two scripts, verbatim: a plain counter at KEYS[1], ARGV[1]
// the limit.
const (
	seedAcquire = classic.CounterAcquire
	seedRelease = classic.CounterRelease
)

// twoReads is the two reads of the library's refusal at a full key, alone:
// its full marker's PTTL and the caller's own lease, with the library's
// KEYS and ARGV (see scripts/acquire.lua).
const twoReads = "local marked = redis.call('PTTL', KEYS[3]);if marked > 0 and not redis.call('ZSCORE', KEYS[1], ARGV[4]) then return -marked end;return 0"

// scripts are the scripts the benchmark runs without the library: the
// classic, and the library's own as the library sends them.
type scripts struct {
	seedAcquire, seedRelease harness.Script
	twoReads                 harness.Script // the refusal's two reads, alone
	acquire, release         harness.Call
}

// capture makes a Limiter with cfg on a client of its own that records
// every EVALSHA, and returns the calls that TryAcquire and Release of
// holder send, with the script of each: what baseline (b) replays. Each is
// made twice, since the first of each may meet NOSCRIPT and fall back to
// EVAL, which loads the script.
func capture(ctx context.Context, env *harness.Env, cfg slotlimit.Config, holder string) (acquire, release harness.Call, err error) {
	c, rec := env.NewRecordingClient()
	defer c.Close()
	l, err := slotlimit.New(c, cfg)
	if err != nil {
		return acquire, release, err
	}
	for range 2 {
		if _, err := l.TryAcquire(ctx, holder); err != nil {
			return acquire, release, err
		}
	}
	acquire = rec.Last()
	for range 2 {
		if err := notHeldIsNil(l.Release(ctx, holder)); err != nil {
			return acquire, release, err
		}
	}
	release = rec.Last()
	for _, x := range []harness.Call{acquire, release} {
		if x.SHA == "" || len(x.Argv) == 0 || x.Argv[len(x.Argv)-1] != holder {
			return acquire, release, fmt.Errorf("cannot read the library's calls: %+v", x)
		}
	}
	return acquire, release, nil
}

// Names of the no-contention variants.
const (
	nameIncr    = "(a) go-redis INCR + DECR"
	nameSeed    = "(c) classic counter scripts, EVALSHA"
	nameRaw     = "(b) library scripts, bare EVALSHA"
	nameLimiter = "slotlimit Limiter TryAcquire + Release"

	// Names of the scripts in the script costs.
	nameLibAcquire  = "library acquire"
	nameLibRelease  = "library release"
	nameSeedAcquire = "classic acquire"
	nameSeedRelease = "classic release"
	nameTwoReads    = "the library's refusal's two reads alone (PTTL, ZSCORE)" // the refusal's two reads
)

// incrDecr is baseline (a): INCR and DECR of a plain counter, no check.
func incrDecr(c *redis.Client, key string) harness.Pairer {
	return harness.Pairer{
		Name:     nameIncr,
		Commands: []string{"incr", "decr"},
		Acquire:  func(ctx context.Context, _ int) error { return c.Incr(ctx, key).Err() },
		Release:  func(ctx context.Context, _ int) error { return c.Decr(ctx, key).Err() },
	}
}

// seedPair is baseline (c): the classic two scripts by EVALSHA on a plain
// counter.
func seedPair(c *redis.Client, s scripts, key string, limit int64) harness.Pairer {
	keys := []string{key}
	max := strconv.FormatInt(limit, 10)
	return harness.Pairer{
		Name:     nameSeed,
		Commands: []string{"evalsha"},
		Acquire: func(ctx context.Context, _ int) error {
			n, err := c.EvalSha(ctx, s.seedAcquire.SHA, keys, max).Int64()
			if err == nil && n > limit {
				err = fmt.Errorf("classic acquire: count %d over limit %d", n, limit)
			}
			return err
		},
		Release: func(ctx context.Context, _ int) error {
			return c.EvalSha(ctx, s.seedRelease.SHA, keys).Err()
		},
	}
}

// rawLease is baseline (b): the library's own acquire and release scripts
// by EVALSHA, with the KEYS and ARGV the library sends and no library code
// around them. Each worker w holds as holders[w]. The arguments are passed
// one by one, as a caller of EvalSha writes them.
func rawLease(c *redis.Client, acquire, release harness.Call, holders []string) harness.Pairer {
	a, r := acquire.Argv, release.Argv
	return harness.Pairer{
		Name:     nameRaw,
		Commands: []string{"evalsha"},
		Acquire: func(ctx context.Context, w int) error {
			// A new lease of one unit comes back as one number above zero
			// (see scripts/acquire.lua); a renewal as a list.
			reply, err := c.EvalSha(ctx, acquire.SHA, acquire.Keys, a[0], a[1], a[2], holders[w]).Result()
			if err != nil {
				return err
			}
			if n, ok := reply.(int64); ok && n > 0 {
				return nil
			}
			if r, ok := reply.([]any); ok && len(r) == 3 {
				if u, ok := r[0].(int64); ok && u >= 1 {
					return nil
				}
			}
			return fmt.Errorf("acquire script: refused or odd reply %v", reply)
		},
		Release: func(ctx context.Context, w int) error {
			n, err := c.EvalSha(ctx, release.SHA, release.Keys, r[0], r[1], holders[w]).Text()
			if err == nil && n != "1" {
				err = fmt.Errorf("release script: %s held no lease", holders[w])
			}
			return err
		},
	}
}

// checkArity reports an error unless the library's calls have the number of
// arguments rawLease and the allocation rows pass.
func checkArity(acquire, release harness.Call) error {
	if len(acquire.Argv) != 4 || len(release.Argv) != 3 {
		return fmt.Errorf("the library's script arguments changed (acquire %q, release %q); update rawLease", acquire.Argv, release.Argv)
	}
	return nil
}

// limiterPair is the library itself: Limiter.TryAcquire and Release.
func limiterPair(l *slotlimit.Limiter, holders []string) harness.Pairer {
	return harness.Pairer{
		Name:     nameLimiter,
		Commands: []string{"evalsha"},
		Acquire: func(ctx context.Context, w int) error {
			res, err := l.TryAcquire(ctx, holders[w])
			if err == nil && !res.Acquired {
				err = fmt.Errorf("TryAcquire refused %s: %d of %d held", holders[w], res.Count, res.Limit)
			}
			return err
		},
		Release: func(ctx context.Context, w int) error {
			return l.Release(ctx, holders[w])
		},
	}
}
