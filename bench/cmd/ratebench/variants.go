package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/bench/internal/classic"
	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/bench/internal/keycycle"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// window is every variant's period, an hour (the report says so): so long
// that no key refills or starts a new window while its calls last, not
// even one whose calls a phase's end splits between two rounds.
const window = time.Hour

// seedWindow is the classic fixed-window script, verbatim: INCR; refuse
// (return the count) above ARGV[1]; on the first hit, EXPIRE the key
// ARGV[2] seconds. KEYS[1] the counter. It counts the calls it refuses.
const seedWindow = classic.FixedWindow

// Names of the variants, in the order of the report.
const (
	nameSeed       = "the classic fixed-window script, verbatim, EVALSHA"
	nameBareWindow = "FixedWindow's script (allow_window.lua), bare EVALSHA"
	nameWindow     = "slotlimit ratelimit Allow, FixedWindow"
	nameBareGCRA   = "GCRA's script (allow_gcra.lua), bare EVALSHA"
	nameGCRA       = "slotlimit ratelimit Allow, GCRA"
	nameRedisRate  = "go-redis/redis_rate/v10 Allow (GCRA)"
)

// Paths of the modules whose versions the report names.
const (
	modRedisRate = "github.com/go-redis/redis_rate/v10"
	modGoRedis   = "github.com/redis/go-redis/v9"
)

// commands are every variant's top-level commands: one script call.
var commands = []string{"evalsha"}

// limits are the run's limits, one per algorithm, of -rate per window.
type limits struct {
	window, gcra ratelimit.Limit
}

func (b *bench) limits() limits {
	return limits{
		window: ratelimit.Limit{Rate: b.rate, Period: window, Algorithm: ratelimit.FixedWindow},
		gcra:   ratelimit.Limit{Rate: b.rate, Period: window, Burst: b.rate, Algorithm: ratelimit.GCRA},
	}
}

// captured are the EVALSHA calls the library sends for Allow, one per
// algorithm, which the bare variants replay with keys of their own.
type captured struct {
	window, gcra harness.Call
}

// capture makes a Limiter on a client of its own that records every
// EVALSHA, and returns the call each algorithm's Allow sends. Each Allow
// is made twice, since the first may meet NOSCRIPT and fall back to EVAL,
// which loads the script.
func capture(ctx context.Context, env *harness.Env, l limits) (captured, error) {
	c, rec := env.NewRecordingClient()
	defer c.Close()
	lim, err := ratelimit.New(c, ratelimit.Config{})
	if err != nil {
		return captured{}, err
	}
	one := func(name string, limit ratelimit.Limit) (harness.Call, error) {
		if err := limit.Validate(); err != nil {
			return harness.Call{}, fmt.Errorf("-rate: %w", err)
		}
		key := env.Key("capture:" + name)
		for range 2 {
			if _, err := lim.Allow(ctx, key, limit); err != nil {
				return harness.Call{}, err
			}
		}
		x := rec.Last()
		// allow_window.lua and allow_gcra.lua take KEYS[1] the key (GCRA's
		// data beside it, as "{key}/ratelimit"), and ARGV the limit's two
		// figures and n.
		dataKey := key
		if limit.Algorithm == ratelimit.GCRA {
			dataKey = "{" + key + "}/ratelimit"
		}
		if x.SHA == "" || len(x.Keys) != 1 || x.Keys[0] != dataKey || len(x.Argv) != 3 || x.Argv[2] != "1" {
			return harness.Call{}, fmt.Errorf("the library's %s call changed (%+v); update the bare variant", name, x)
		}
		return x, nil
	}
	var out captured
	if out.window, err = one("window", l.window); err != nil {
		return out, err
	}
	out.gcra, err = one("gcra", l.gcra)
	return out, err
}

// A variant is one way of making an Allow call, on keys of its own: each
// worker calls each of its keys callsPerKey times in a row, then moves to
// a new key (see keycycle). It counts the calls allowed.
type variant struct {
	name    string
	tag     string // in its keys' names
	prefix  string // of its keys: the run's prefix and tag
	keys    *keycycle.Keys
	workers []worker
	// allow makes one call on key and reports whether it was allowed.
	allow func(ctx context.Context, key string) (bool, error)
}

// A worker is one worker's count of calls allowed. Only worker w reads or
// writes workers[w] during a phase.
type worker struct {
	allowed int64    // calls allowed since resetCounts
	_       [56]byte // keeps workers off each other's cache lines
}

func (b *bench) newVariant(name, tag string, allow func(ctx context.Context, key string) (bool, error)) *variant {
	prefix := b.Key(tag)
	return &variant{name: name, tag: tag, prefix: prefix, keys: keycycle.New(prefix, b.Workers, b.callsPerKey), workers: make([]worker, b.Workers), allow: allow}
}

// call is the variant's call for worker w, for harness.Drive.
func (v *variant) call(ctx context.Context, w int) error {
	ok, err := v.allow(ctx, v.keys.Next(w))
	if err != nil {
		return err
	}
	if ok {
		v.workers[w].allowed++
	}
	return nil
}

// allowed returns the calls allowed since resetCounts.
func (v *variant) allowed() int64 {
	var n int64
	for i := range v.workers {
		n += v.workers[i].allowed
	}
	return n
}

func (v *variant) resetCounts() {
	for i := range v.workers {
		v.workers[i].allowed = 0
	}
}

// caller returns the variant as a harness.Caller.
func (v *variant) caller() harness.Caller {
	return harness.Caller{Name: v.name, Commands: commands, Call: v.call}
}

func (b *bench) callers() []harness.Caller {
	out := make([]harness.Caller, len(b.variants))
	for i, v := range b.variants {
		out[i] = v.caller()
	}
	return out
}

// newVariants returns the variants, in the order of the report.
func (b *bench) newVariants() ([]*variant, error) {
	c := b.Client
	l := b.limits()
	lim, err := ratelimit.New(c, ratelimit.Config{})
	if err != nil {
		return nil, err
	}
	rr := redis_rate.NewLimiter(c)
	rrLimit := redis_rate.Limit{Rate: int(b.rate), Burst: int(b.rate), Period: window}
	threshold, seconds := strconv.FormatInt(b.rate, 10), strconv.FormatInt(int64(window/time.Second), 10)
	return []*variant{
		b.newVariant(nameSeed, "seed", func(ctx context.Context, key string) (bool, error) {
			n, err := c.EvalSha(ctx, b.seed.SHA, []string{key}, threshold, seconds).Int64()
			return n <= b.rate, err
		}),
		b.newVariant(nameBareWindow, "barewindow", bare(c, b.captured.window)),
		b.newVariant(nameWindow, "window", allow(lim, l.window)),
		b.newVariant(nameBareGCRA, "baregcra", bare(c, b.captured.gcra)),
		b.newVariant(nameGCRA, "gcra", allow(lim, l.gcra)),
		b.newVariant(nameRedisRate, "redisrate", func(ctx context.Context, key string) (bool, error) {
			res, err := rr.Allow(ctx, key, rrLimit)
			if err != nil {
				return false, err
			}
			return res.Allowed > 0, nil
		}),
	}, nil
}

// allow is the library: Limiter.Allow on key with limit.
func allow(l *ratelimit.Limiter, limit ratelimit.Limit) func(context.Context, string) (bool, error) {
	return func(ctx context.Context, key string) (bool, error) {
		res, err := l.Allow(ctx, key, limit)
		return res.Allowed, err
	}
}

// bare is the library's script by EVALSHA with the arguments the library
// sends, passed one by one as a caller of EvalSha writes them, and no
// library code around it. The reply's first integer is 1 when allowed.
func bare(c *redis.Client, x harness.Call) func(context.Context, string) (bool, error) {
	a := x.Argv
	return func(ctx context.Context, key string) (bool, error) {
		reply, err := c.EvalSha(ctx, x.SHA, []string{key}, a[0], a[1], a[2]).Int64Slice()
		if err != nil {
			return false, err
		}
		if len(reply) != 4 {
			return false, fmt.Errorf("%s: odd reply %v", x.SHA, reply)
		}
		return reply[0] == 1, nil
	}
}
