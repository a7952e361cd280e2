package slotlimit

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/hashtag"
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
// ErrInvalidConfig when client is nil or cfg is invalid; a Key with a '}'
// must hold a hash tag, since Release keeps a record beside the key, in
// its cluster slot. NewCounter does not contact Redis.
func NewCounter(client redis.UniversalClient, cfg Config) (*Counter, error) {
	s, err := newSlots(client, cfg, DefaultCounterTTL)
	if err != nil {
		return nil, err
	}
	prefix, ok := hashtag.SidePrefix(s.cfg.Key)
	if !ok {
		return nil, invalidConfig("Key %q has a '}' but no hash tag", s.cfg.Key)
	}
	return &Counter{slots: s, keys: []string{s.cfg.Key}, records: prefix + releaseRecordSuffix}, nil
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
//
// A call whose reply was lost after it ran, and which the go-redis client
// therefore sent again (as it does by default), counts again: the first
// run took a slot that no one will release, and the second takes another,
// or is refused if the first took the last. So a re-sent TryAcquire can
// make the Counter refuse early, until the key expires, but never admit
// beyond the limit. The count has no room for a call's identity that
// would make it exact; a Limiter's leases are named by their holders, and
// its acquires are exact.
func (c *Counter) TryAcquire(ctx context.Context) (Result, error) {
	if err := c.usable(ctx); err != nil {
		return Result{}, err
	}
	o := c.begin("TryAcquire", 1)
	res, err := c.runAcquire(ctx)
	observeResult(ctx, &o, res, err)
	return res, err
}

// Acquire takes one slot, waiting until the count is below the limit or
// ctx is done. If ctx is done first, Acquire returns an error that matches
// ctx.Err(). Unlike Limiter.Acquire, it cannot release a slot whose acquire
// had an unknown outcome, since a Counter cannot tell its slots apart. Each
// of its tries is a TryAcquire, and counts again when it is sent again.
func (c *Counter) Acquire(ctx context.Context) (Result, error) {
	if err := c.usable(ctx); err != nil {
		return Result{}, err
	}
	o := c.begin("Acquire", 1)
	res, err := poll(ctx, func() (Result, error) { return c.runAcquire(ctx) })
	res, err = acquireOutcome(ctx, c.cfg, res, err)
	observeResult(ctx, &o, res, err)
	return res, err
}

// Release gives back one slot. It returns an error matching ErrNotHeld
// when the count was already 0 or the key was gone, and never takes the
// count below 0.
//
// Release gives back one slot however often its call is sent: it draws a
// random ID for the call and leaves, beside the key, a record of its
// answer, which lives for a minute. A call that the go-redis client sends
// again after its reply was lost finds the record, answers as the first
// run did, and gives nothing back, so it never frees a slot someone else
// holds. Each Release thus costs the server one more key write, whose key
// lapses by itself. A Release that fails with an error matching
// ErrOutcomeUnknown may or may not have given its slot back, and a new
// call draws a new ID: calling it again can give back a second slot, so
// call it again only if the slot was surely still taken.
func (c *Counter) Release(ctx context.Context) error {
	if err := c.usable(ctx); err != nil {
		return err
	}
	o := c.begin("Release", 0)
	released, err := c.runRelease(ctx)
	if err != nil {
		o.Failed(ctx, err)
		return err
	}
	o.Released(ctx, released)
	if !released {
		return opError("release", c.cfg.Key, ErrNotHeld)
	}
	return nil
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
