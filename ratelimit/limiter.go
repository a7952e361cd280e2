package ratelimit

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/coalesce"
	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/record"
)

// A Limiter checks events against limits kept in Redis, shared by every
// process that uses the same keys. The limit is given with each call, so
// one Limiter serves any number of keys and limits. Each call is decided
// by one Lua script, on the Redis server's clock: a refused call counts
// nothing, and a call that fails with a Redis error reply (such as
// WRONGTYPE for a key of another type) leaves the key as it was.
// Concurrent Allow and AllowN calls on one key, limit and n share one
// script call, each decided as if made alone (see Config.DisableCoalescing
// and the package documentation).
//
// Use one Algorithm per key. A key checked with several Limits of one
// Algorithm follows each call's Limit, against the state the others left.
//
// A Limiter is safe for concurrent use. A zero or nil Limiter, one not
// made by New, returns ErrInvalidConfig from every method.
type Limiter struct {
	base kernel.Base

	// memo remembers when the rate record of each key was last written
	// (see record.go).
	memo record.Memo

	// allows joins concurrent AllowN calls of one n on one key and limit
	// into batches, each sent as one script call by send, or sends each
	// alone when Config.DisableCoalescing is set.
	allows coalesce.Group[batchKey, struct{}, Result]
}

// A batchKey is what the calls of one batch share: the limit's data key,
// the limit in the scripts' units, and n.
type batchKey struct {
	key  string // the user's key
	data string
	p    params
	n    int64
}

// maxBatch is the most calls one batch carries. A batch's script decides
// its calls in a loop of a few Lua operations each, around one TIME, GET
// and SET (or GET, PTTL and INCRBY) that do not grow with it, and replies
// 4 integers (3 for a window) whatever its size: a GCRA batch of 256
// calls, all allowed, takes Redis about 60–80µs on a 2-core machine (see
// BenchmarkBatchScript), well under a millisecond.
const maxBatch = 256

// New returns a Limiter on client, which may be a *redis.Client, a
// *redis.ClusterClient or a *redis.Ring. A zero Config is valid. New does
// not contact Redis; it returns an error matching ErrInvalidConfig for a
// nil client, untyped or a typed nil such as a nil *redis.Client.
func New(client redis.UniversalClient, cfg Config) (*Limiter, error) {
	b, err := errs.New(client, kernel.Settings{Observer: cfg.Observer})
	if err != nil {
		return nil, err
	}
	l := &Limiter{base: b}
	l.allows.Send, l.allows.Max, l.allows.Alone = l.send, maxBatch, cfg.DisableCoalescing
	return l, nil
}

// Allow is shorthand for AllowN(ctx, key, limit, 1).
func (l *Limiter) Allow(ctx context.Context, key string, limit Limit) (Result, error) {
	return l.allowN(ctx, "Allow", key, limit, 1)
}

// AllowN counts n events on key against limit if all n are allowed now,
// and otherwise counts none: Result.Allowed says which, with a nil error.
// An n of 0 counts nothing and reports the key's state (Allowed is false
// only when the key is over its limit); an n above what limit ever allows
// at once is refused with RetryAfter Never.
//
// Bad input returns ErrInvalidLimit, ErrInvalidKey, ErrInvalidN or
// ErrInvalidArgument (a nil ctx), with nothing sent. A Redis error reply
// counts nothing. An error matching ErrOutcomeUnknown (and ctx.Err(), when
// ctx ended mid-call) leaves it open whether the events were counted.
//
// A call sent again, by the client or the caller, counts anew against
// what the first counted: it can refuse early, but never admits beyond
// the limit, and Allowed always means the events were counted.
func (l *Limiter) AllowN(ctx context.Context, key string, limit Limit, n int64) (Result, error) {
	return l.allowN(ctx, "AllowN", key, limit, n)
}

// allowN is AllowN, named method in its errors and its report.
func (l *Limiter) allowN(ctx context.Context, method, key string, limit Limit, n int64) (Result, error) {
	if err := l.check(ctx, method, key); err != nil {
		return Result{}, err
	}
	c := l.base.Begin(method, key, "", n, capacity(limit))
	res, err := l.allowRun(ctx, method, key, limit, n)
	if err != nil {
		c.Failed(ctx, err)
		return Result{}, err
	}
	if res.Allowed {
		c.Acquired(ctx, capacity(res.Limit)-res.Remaining)
	} else {
		c.Refused(ctx, capacity(res.Limit)-res.Remaining)
	}
	return res, nil
}

// allowRun checks the input of an AllowN, before anything is queued or
// sent, and makes the call: alone, or in a batch with the concurrent
// calls of the same n on the same key and limit.
func (l *Limiter) allowRun(ctx context.Context, method, key string, limit Limit, n int64) (Result, error) {
	data, p, err := prepare(key, limit, n)
	if err != nil {
		return Result{}, errs.Op(method, key, err)
	}
	res, err := l.allows.Do(ctx, batchKey{key: key, data: data, p: p, n: n}, struct{}{})
	if err != nil {
		return Result{}, errs.Call(ctx, method, key, err)
	}
	return res, nil
}

// send is the Send of l.allows: a batch of one is today's single call,
// allow_gcra.lua or allow_window.lua, with its reply; a larger batch runs
// the batch script of its algorithm once for all its calls.
func (l *Limiter) send(ctx context.Context, k batchKey, calls []struct{}) ([]Result, error) {
	if len(calls) == 1 {
		res, err := l.allow(ctx, k.key, k.data, k.p, k.n)
		if err != nil {
			return nil, err
		}
		return []Result{res}, nil
	}
	return l.allowBatch(ctx, k.key, k.data, k.p, k.n, len(calls))
}

// Reset deletes what limit counts on key, so that key's next event finds
// the full allowance; a key with nothing counted is no error. It returns
// AllowN's errors for bad input, with nothing sent, a Redis error reply
// (the key then left as it was), or an error matching ErrOutcomeUnknown.
// A call sent again deletes again, as of its last run.
func (l *Limiter) Reset(ctx context.Context, key string, limit Limit) error {
	if err := l.check(ctx, "Reset", key); err != nil {
		return err
	}
	c := l.base.Begin("Reset", key, "", 0, capacity(limit))
	if err := l.reset(ctx, key, limit); err != nil {
		c.Failed(ctx, err)
		return err
	}
	c.Done(ctx)
	return nil
}

func (l *Limiter) reset(ctx context.Context, key string, limit Limit) error {
	data, p, err := prepare(key, limit, 0)
	if err != nil {
		return errs.Op("Reset", key, err)
	}
	if p.limit.Algorithm == FixedWindow {
		err = l.resetWindow(ctx, data)
	} else {
		err = l.base.Client.Del(ctx, data).Err()
	}
	return errs.Call(ctx, "Reset", key, err)
}

// check returns the error of a call of method on key, before anything
// is sent, by a Limiter not made by New or with a nil ctx.
func (l *Limiter) check(ctx context.Context, method, key string) error {
	return errs.Check(ctx, l != nil && l.base.Usable(), method, key)
}

// prepare checks one call's input and returns its data key and its limit
// in the scripts' units.
func prepare(key string, limit Limit, n int64) (string, params, error) {
	if n < 0 || n > MaxRate {
		return "", params{}, invalid(ErrInvalidN, "n is %d, must be 0 to %d", n, int64(MaxRate))
	}
	p, err := limit.check()
	if err != nil {
		return "", params{}, err
	}
	data, err := dataKey(key, p.limit.Algorithm)
	return data, p, err
}

// capacity is the most events limit allows at once: Burst (or Rate, when
// Burst is 0) for GCRA, Rate for FixedWindow.
func capacity(limit Limit) int64 {
	if limit.Algorithm == FixedWindow {
		return limit.Rate
	}
	return limit.burst()
}
