package ratelimit

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/kernel"
)

// A Limiter checks events against limits kept in Redis, shared by every
// process that uses the same keys. It holds no state of its own but the
// client and its Config: the limit is given with each call, so one
// Limiter serves any number of keys and limits.
//
// Each call is one Lua script, on the Redis server's clock. A refused call
// counts nothing. An error matching ErrOutcomeUnknown leaves the outcome
// unknown: the events may or may not have been counted, and, since the
// client may have sent the call more than once, may have been counted up
// to once per try (see AllowN), each time within the limit. A Redis error
// reply (such as WRONGTYPE for a key of another type) means nothing was
// counted, and the key is left as it was.
//
// Use one Algorithm per key. A key checked with several Limits of one
// Algorithm follows each call's Limit, against the state the others left.
//
// A Limiter is safe for concurrent use. A zero or nil Limiter, one not
// made by New, returns ErrInvalidConfig.
type Limiter struct {
	base kernel.Base
}

// New returns a Limiter on client, which may be a *redis.Client, a
// *redis.ClusterClient or a *redis.Ring. A zero Config is valid. New does
// not contact Redis; it returns an error matching ErrInvalidConfig for a
// nil client, untyped or a typed nil such as a nil *redis.Client.
func New(client redis.UniversalClient, cfg Config) (*Limiter, error) {
	b, err := errs.New(client, kernel.Settings{Observer: cfg.Observer})
	if err != nil {
		return nil, err
	}
	return &Limiter{base: b}, nil
}

// Allow counts one event on key against limit if it is allowed now. It is
// shorthand for AllowN(ctx, key, limit, 1), and reports to the Observer
// as "Allow".
func (l *Limiter) Allow(ctx context.Context, key string, limit Limit) (Result, error) {
	return l.allowN(ctx, "Allow", key, limit, 1)
}

// AllowN counts n events on key against limit if all n are allowed now,
// and otherwise counts none: Result.Allowed says which, with a nil error.
// An n above what limit can ever allow at once is refused with RetryAfter
// Never. n 0 counts nothing and reports the key's state: Allowed is false
// only when the key is over its limit.
//
// A FixedWindow counts at key itself, as the classic INCR-and-EXPIRE
// script does; a GCRA limit keeps its time at a name of this package's
// beside key, in key's hash slot: "{k}/ratelimit" for a key "k",
// "{t}:k:ratelimit" for a key "{t}:k" that has a hash tag.
//
// It returns an error matching ErrInvalidLimit, ErrInvalidKey,
// ErrInvalidN (n negative or above MaxRate) or ErrInvalidArgument (a nil
// ctx), all of which match ErrInvalidArgument, or ErrInvalidConfig, with
// nothing sent, for bad input; an error matching ctx.Err() when ctx ended
// first; a Redis error reply, such as WRONGTYPE for a key of another
// type, with nothing counted; and an error matching ErrOutcomeUnknown
// when the call was sent and no answer came back. Errors name the method
// and the key.
//
// A re-sent call counts again. go-redis sends a command again when its
// reply is lost (MaxRetries, 3 by default), and AllowN carries no
// identity that the second run could recognise: that run is a call of its
// own, made against what the first counted. So a re-send can count the
// events twice and answer allowed, or find no room left and answer
// refused for events its first run counted: it can refuse early, but it
// never admits beyond the limit, and an answer of allowed always means
// the events were counted. (An identity would cost Redis time that the
// script's budget does not hold, and FixedWindow's key is a plain count,
// with no room for one.) When the reply is lost on every try, the call
// returns an error matching ErrOutcomeUnknown, and the events may have
// been counted once per try, within the limit; calling again with the
// same arguments counts anew, in the same safe direction.
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

func (l *Limiter) allowRun(ctx context.Context, method, key string, limit Limit, n int64) (Result, error) {
	data, p, err := prepare(key, limit, n)
	if err != nil {
		return Result{}, errs.Op(method, key, err)
	}
	res, err := l.allow(ctx, data, p, n)
	if err != nil {
		return Result{}, errs.Call(ctx, method, key, err)
	}
	return res, nil
}

// Reset deletes what limit counts on key, so that key's next event finds
// the full allowance: the count at key itself for a FixedWindow (and
// nothing else there: a key that holds anything but a count fails with an
// error and is left as it was), the time beside key for GCRA (see
// AllowN). It is idempotent: a call that meets no count succeeds. It
// returns, with nothing sent, the errors AllowN returns for bad input; a
// Redis error reply; and an error matching ErrOutcomeUnknown when the
// call was sent and no answer came back.
//
// After an error matching ErrOutcomeUnknown, call again with the same
// arguments. A re-sent Reset (its reply lost, and the call sent again by
// the client, or by the caller) deletes again: the key is at
// its full allowance as of the last run. When nothing was counted on the
// key between the runs, that is one call's effect; events counted between
// them, in the moment before the client's retry, are deleted with the
// rest, as if Reset had been called that moment later.
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
