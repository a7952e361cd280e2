package slotlimit

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// releaseRecordMillis is releaseRecordTTL as a script argument.
var releaseRecordMillis any = formatMillis(releaseRecordTTL)

// A Counter limits concurrency with a plain integer counter, the layout of
// the classic INCR/DECR limiter scripts: Config.Key holds an integer, a
// successful acquire increments it and sets the whole key's expiry to TTL,
// and a release decrements it, never below 0. Processes that still run those
// scripts on the same key share the same count.
//
// A Counter knows nothing of who holds a slot. A holder that releases twice
// frees someone else's slot, a holder that acquires twice takes two, and a
// crashed holder's slot is freed only when the whole key expires, which
// frees every other slot at the same moment; under steady traffic that never
// happens. Use a Limiter unless scripts that keep this integer must share
// the count.
//
// A Counter is safe for concurrent use.
type Counter struct {
	slots
	keys    []string
	records string // the prefix of the names of Release's records
}

// releaseRecordTTL is how long a Release's record of its call lives: far
// longer than a client's retries of one call take.
const releaseRecordTTL = time.Minute

// releaseRecordSuffix begins the names of Release's records beside the key.
const releaseRecordSuffix = "released:"

// NewCounter returns a Counter for cfg. It returns an error matching
// ErrInvalidConfig when client is nil or cfg is invalid (see
// ErrInvalidConfig). NewCounter does not contact Redis.
func NewCounter(client redis.UniversalClient, cfg Config) (*Counter, error) {
	s, err := newSlots(client, cfg, DefaultCounterTTL, releaseRecordSuffix, recordSuffix)
	if err != nil {
		return nil, err
	}
	c := &Counter{slots: s, keys: s.base.Keys[:1:1], records: s.base.Keys[1]}
	// The key expires TTL after the last acquire.
	c.withRecord(s.base.Keys[2], url.Values{"limit": {strconv.FormatInt(s.cfg.Limit, 10)}}, s.cfg.TTL)
	return c, nil
}

// Config returns the Counter's configuration, with the defaults filled
// in; the zero Config for a zero or nil Counter.
func (c *Counter) Config() Config {
	if c == nil {
		return Config{}
	}
	return c.cfg
}

// usable returns the error of a call of method made with ctx, or nil
// when the call may go on: a zero or nil Counter was not made by
// NewCounter.
func (c *Counter) usable(ctx context.Context, method string) error {
	if c == nil {
		return errs.Check(ctx, false, method, "")
	}
	return c.slots.usable(ctx, method)
}

// TryAcquire takes one slot if the count is below the limit, and never
// waits. A refusal returns Acquired false, with EarliestLapse the time
// until the whole key expires, and a nil error.
//
// A TryAcquire sent again after it ran, such as after an error matching
// ErrOutcomeUnknown, counts again: the slot of its first run is never
// released, so the Counter may refuse early until the key expires, but
// never admits beyond the limit. A Limiter's acquires are exact.
func (c *Counter) TryAcquire(ctx context.Context) (Result, error) {
	if err := c.usable(ctx, "TryAcquire"); err != nil {
		return Result{}, err
	}
	o := c.base.Begin("TryAcquire", c.cfg.Key, "", 1, c.cfg.Limit)
	res, err := c.runAcquire(ctx, "TryAcquire")
	observeResult(ctx, &o, res, err)
	return res, err
}

// Acquire takes one slot, waiting until the count is below the limit or
// ctx is done. If ctx is done first, Acquire returns an error that matches
// ctx.Err(). Each of its tries is a TryAcquire, and counts again when it
// is sent again; unlike a Limiter's, a failed Acquire cannot give back a
// slot its last try may have taken.
func (c *Counter) Acquire(ctx context.Context) (Result, error) {
	if err := c.usable(ctx, "Acquire"); err != nil {
		return Result{}, err
	}
	o := c.base.Begin("Acquire", c.cfg.Key, "", 1, c.cfg.Limit)
	res, err := poll(ctx, func() (Result, error) { return c.runAcquire(ctx, "Acquire") })
	res, err = acquireOutcome(ctx, "Acquire", c.cfg, res, err)
	observeResult(ctx, &o, res, err)
	return res, err
}

// Release gives back one slot. It returns an error matching ErrNotHeld
// when the count was already 0 or the key was gone, and never takes the
// count below 0.
//
// A Release sent again gives back one slot, and answers as its first run
// did. A new call is a new release: after an error matching
// ErrOutcomeUnknown, call Release again only if the slot was surely still
// taken.
func (c *Counter) Release(ctx context.Context) error {
	if err := c.usable(ctx, "Release"); err != nil {
		return err
	}
	o := c.base.Begin("Release", c.cfg.Key, "", 0, c.cfg.Limit)
	released, err := c.runRelease(ctx)
	if err != nil {
		o.Failed(ctx, err)
		return err
	}
	o.Released(ctx, released)
	if !released {
		return errs.Op("Release", c.cfg.Key, ErrNotHeld)
	}
	return nil
}

// Count returns the current count; 0 when the key is gone.
func (c *Counter) Count(ctx context.Context) (int64, error) {
	if err := c.usable(ctx, "Count"); err != nil {
		return 0, err
	}
	n, err := c.base.Client.Get(ctx, c.cfg.Key).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, errs.Call(ctx, "Count", c.cfg.Key, err)
	}
	return n, nil
}
