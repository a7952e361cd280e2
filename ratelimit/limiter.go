package ratelimit

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
)

// A Limiter checks events against limits kept in Redis, shared by every
// process that uses the same keys. It holds no state of its own but the
// client: the limit is given with each call, so one Limiter serves any
// number of keys and limits.
//
// Each call is one Lua script, on the Redis server's clock. A refused call
// counts nothing. An error from the connection leaves the outcome unknown:
// the events may or may not have been counted, and, since the client may
// have sent the call more than once, may have been counted up to once per
// try (see AllowN), each time within the limit. A Redis error reply (such
// as WRONGTYPE for a key of another type) means nothing was counted, and
// the key is left as it was.
//
// Use one Algorithm per key. A key checked with several Limits of one
// Algorithm follows each call's Limit, against the state the others left.
//
// A Limiter is safe for concurrent use. A zero or nil Limiter, or one made
// with a nil client, returns ErrNoClient.
type Limiter struct {
	client redis.UniversalClient
}

// New returns a Limiter on client, which may be a *redis.Client, a
// *redis.ClusterClient or a *redis.Ring. New does not contact Redis.
func New(client redis.UniversalClient) *Limiter {
	if script.IsNil(client) {
		return &Limiter{}
	}
	return &Limiter{client: client}
}

// Allow counts one event on key against limit if it is allowed now. It is
// shorthand for AllowN(ctx, key, limit, 1).
func (l *Limiter) Allow(ctx context.Context, key string, limit Limit) (Result, error) {
	return l.AllowN(ctx, key, limit, 1)
}

// AllowN counts n events on key against limit if all n are allowed now,
// and otherwise counts none. An n above what limit can ever allow at once
// is refused with RetryAfter Never. n 0 counts nothing and reports the
// key's state: Allowed is false only when the key is over its limit.
//
// key is used as given. It returns an error matching ErrInvalidLimit,
// ErrInvalidKey, ErrInvalidN (n negative or above MaxRate) or
// ErrNoClient, with nothing sent, for bad input; an error matching
// ctx.Err() when ctx ended first; and otherwise the client's error,
// naming the method and the key.
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
// returns an error, and the events may have been counted once per try,
// within the limit.
func (l *Limiter) AllowN(ctx context.Context, key string, limit Limit, n int64) (Result, error) {
	p, err := l.check(ctx, key, limit, n)
	if err != nil {
		return Result{}, callerr.Op("ratelimit", "allow", key, err)
	}
	s := allowGCRAScript
	if p.limit.Algorithm == FixedWindow {
		s = allowWindowScript
	}
	reply, err := s.Run(ctx, l.client, []string{key}, p.cost, p.tau, n).Result()
	if err != nil {
		return Result{}, callerr.Call(ctx, "ratelimit", "allow", key, err)
	}
	res := []Result{{Limit: p.limit}}
	if err := decode(res, reply); err != nil {
		return Result{}, callerr.Op("ratelimit", "allow", key, err)
	}
	return res[0], nil
}

// Reset deletes key, so that its next event finds the full allowance. It
// is idempotent: a call that meets no key succeeds. It returns errors
// matching ErrInvalidKey for an empty key, ErrInvalidArgument for a nil
// ctx and ErrNoClient, with nothing sent, and otherwise the client's
// error.
//
// A re-sent Reset (its reply lost, and the call sent again by the client)
// deletes the key again: the key is at its full allowance as of the last
// run. When nothing was counted on the key between the runs, that is one
// call's effect; events counted between them, in the moment before the
// client's retry, are deleted with the rest, as if Reset had been called
// that moment later.
func (l *Limiter) Reset(ctx context.Context, key string) error {
	if err := l.usable(ctx); err != nil {
		return callerr.Op("ratelimit", "reset", key, err)
	}
	if key == "" {
		return callerr.Op("ratelimit", "reset", key, invalid(ErrInvalidKey, "the key is empty"))
	}
	if err := l.client.Del(ctx, key).Err(); err != nil {
		return callerr.Call(ctx, "ratelimit", "reset", key, err)
	}
	return nil
}

// usable returns the error of a call with ctx on l, before anything is
// sent, when l has no client or ctx is nil.
func (l *Limiter) usable(ctx context.Context) error {
	if l == nil || l.client == nil {
		return ErrNoClient
	}
	if ctx == nil {
		return errNilContext
	}
	return nil
}

// check validates one call's input and returns its limit in the
// scripts' units.
func (l *Limiter) check(ctx context.Context, key string, limit Limit, n int64) (params, error) {
	if err := l.usable(ctx); err != nil {
		return params{}, err
	}
	if key == "" {
		return params{}, invalid(ErrInvalidKey, "the key is empty")
	}
	if n < 0 || n > MaxRate {
		return params{}, invalid(ErrInvalidN, "n is %d, must be 0 to %d", n, int64(MaxRate))
	}
	return limit.check()
}
