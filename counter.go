package slotlimit

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
)

// A Counter limits concurrency with a plain integer counter, the same data
// as the scripts this library grew from: Config.Key holds an integer, a
// successful acquire increments it and sets the whole key's expiry to TTL,
// and a release decrements it, never below 0. Processes that still run those
// scripts on the same key share the same count.
//
// A Counter knows nothing of who holds a slot. A holder that releases twice
// frees someone else's slot, a holder that acquires twice takes two, and a
// crashed holder's slot is freed only when the whole key expires, which
// frees every other slot at the same moment; under steady traffic that never
// happens. Use a Limiter unless the seed-compatible data is required.
//
// A Counter is safe for concurrent use.
type Counter struct {
	slots
	keys []string
}

// NewCounter returns a Counter for cfg. It returns an error matching
// ErrInvalidConfig when client is nil or cfg is invalid. NewCounter does
// not contact Redis.
func NewCounter(client redis.UniversalClient, cfg Config) (*Counter, error) {
	s, err := newSlots(client, cfg, DefaultCounterTTL)
	if err != nil {
		return nil, err
	}
	return &Counter{slots: s, keys: []string{s.cfg.Key}}, nil
}

// Config returns the Counter's configuration, with the default TTL filled
// in; the zero Config for a zero or nil Counter.
func (c *Counter) Config() Config {
	if c == nil {
		return Config{}
	}
	return c.cfg
}

// usable returns errUnusable for a zero or nil Counter, and an error
// matching ErrInvalidArgument for a nil ctx.
func (c *Counter) usable(ctx context.Context) error {
	if c == nil || c.client == nil {
		return errUnusable
	}
	if ctx == nil {
		return errNilContext
	}
	return nil
}

// TryAcquire takes one slot if the count is below the limit, and never
// waits. Taking the last slot returns Acquired true; a refusal returns
// Acquired false, with EarliestLapse set to the time until the whole key
// expires. An error from the connection leaves the outcome unknown, and
// with no holder identity it cannot be undone: at worst one slot stays
// taken until the key expires.
func (c *Counter) TryAcquire(ctx context.Context) (Result, error) {
	if err := c.usable(ctx); err != nil {
		return Result{}, err
	}
	reply, err := c.runner.Run(ctx, counterAcquireScript, c.keys, c.limit, c.ttl).Int64Slice()
	if err != nil {
		return Result{Limit: c.cfg.Limit}, callError(ctx, "acquire", c.cfg.Key, err)
	}
	if len(reply) != 3 {
		return Result{Limit: c.cfg.Limit}, opError("acquire", c.cfg.Key, callerr.UnexpectedReply(reply))
	}
	res := Result{Acquired: reply[0] == 1, Count: reply[1], Limit: c.cfg.Limit}
	if res.Acquired {
		res.Weight = 1
		res.ExpiresAt = time.UnixMilli(reply[2])
	} else {
		res.EarliestLapse = time.Duration(max(reply[2], 0)) * time.Millisecond
	}
	return res, nil
}

// Acquire takes one slot, waiting until the count is below the limit or
// ctx is done. If ctx is done first, Acquire returns an error that matches
// ctx.Err(). Unlike Limiter.Acquire, it cannot release a slot whose acquire
// had an unknown outcome, since a Counter cannot tell its slots apart.
func (c *Counter) Acquire(ctx context.Context) (Result, error) {
	if err := c.usable(ctx); err != nil {
		return Result{}, err
	}
	res, err := poll(ctx, func() (Result, error) { return c.TryAcquire(ctx) })
	return acquireOutcome(ctx, c.cfg, res, err)
}

// Release gives back one slot. It returns false when the count was
// already 0 or the key was gone, and never takes the count below 0.
func (c *Counter) Release(ctx context.Context) (bool, error) {
	if err := c.usable(ctx); err != nil {
		return false, err
	}
	n, err := c.runner.Run(ctx, counterReleaseScript, c.keys).Int64()
	if err != nil {
		return false, callError(ctx, "release", c.cfg.Key, err)
	}
	return n == 1, nil
}

// Count returns the current count; 0 when the key is gone.
func (c *Counter) Count(ctx context.Context) (int64, error) {
	if err := c.usable(ctx); err != nil {
		return 0, err
	}
	n, err := c.client.Get(ctx, c.cfg.Key).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, callError(ctx, "count", c.cfg.Key, err)
	}
	return n, nil
}
