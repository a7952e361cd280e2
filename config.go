package slotlimit

import (
	"reflect"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// MaxLimit is the highest Config.Limit: the scripts count units in Lua
// numbers, which are exact up to 2^53.
const MaxLimit = 1 << 53

// Default lease times, used when Config.TTL is 0.
const (
	DefaultTTL        = 5 * time.Minute
	DefaultCounterTTL = 300 * time.Second
)

// Config describes one set of slots.
type Config struct {
	// Key is the Redis key that holds the slots, e.g. "ar:" + areaCode.
	// Every Limiter and Counter built with the same Key shares the same slots.
	Key string

	// Limit is the most holders at once, or units when leases weigh more
	// than one; it must be at least 1 and at most MaxLimit.
	Limit int64

	// TTL is the lease time: a slot that is neither renewed nor released
	// is freed this long after it was taken. It is kept to the millisecond.
	// 0 means DefaultTTL for a Limiter and DefaultCounterTTL for a Counter.
	TTL time.Duration

	// Fair makes waiters take slots in the order they began to wait, across
	// every process, at the cost of a few more Redis commands per call. A
	// TryAcquire never waits, so in fair mode it succeeds only when the
	// slots cover every waiter queued ahead as well. Every Limiter on one
	// Key should agree on Fair. A Counter ignores it.
	Fair bool

	// Replicas, when above 0, makes every write wait until that many
	// replicas have it (Redis WAIT), so that a lease survives a failover
	// to one of them. A write they do not acknowledge within
	// ReplicaTimeout fails with ErrNotReplicated. Each write then costs a
	// round trip to the replicas. 0, the default, leaves replication
	// asynchronous: a failover can lose the last writes.
	Replicas int

	// ReplicaTimeout bounds the wait for Replicas; 0 means one second.
	ReplicaTimeout time.Duration
}

// check validates c and fills in the default TTL.
func (c Config) check(defaultTTL time.Duration) (Config, error) {
	switch {
	case c.Key == "":
		return c, invalidConfig("Key is empty")
	case c.Limit < 1 || c.Limit > MaxLimit:
		return c, invalidConfig("Limit is %d, must be 1 to %d", c.Limit, int64(MaxLimit))
	case c.TTL < 0:
		return c, invalidConfig("TTL is %v, must not be negative", c.TTL)
	case c.TTL > 0 && c.TTL < time.Millisecond:
		return c, invalidConfig("TTL is %v, must be at least 1ms", c.TTL)
	case c.Replicas < 0:
		return c, invalidConfig("Replicas is %d, must not be negative", c.Replicas)
	case c.ReplicaTimeout < 0:
		return c, invalidConfig("ReplicaTimeout is %v, must not be negative", c.ReplicaTimeout)
	}
	if c.Replicas > 0 && c.ReplicaTimeout == 0 {
		c.ReplicaTimeout = time.Second
	}
	if c.TTL == 0 {
		c.TTL = defaultTTL
	}
	return c, nil
}

// String describes the slots, e.g. `"ar:0571" 60 slots, 5m0s leases`.
func (c Config) String() string {
	return strconv.Quote(c.Key) + " " + strconv.FormatInt(c.Limit, 10) + " slots, " + c.TTL.String() + " leases"
}

// Result is the outcome of an acquire.
type Result struct {
	// Acquired reports whether the caller holds a slot after the call.
	Acquired bool

	// Count is the number of slots in use right after the call,
	// including the caller's when Acquired.
	Count int64

	// Limit is the limit the call was made with.
	Limit int64

	// ExpiresAt is when the caller's slot lapses unless it is renewed or
	// released, by the Redis server's clock. It is zero when not Acquired.
	ExpiresAt time.Time

	// EarliestLapse is set when not Acquired: the time until the earliest
	// lease lapses (for a Counter, until the whole key expires), by the
	// server's clock. It is when a unit frees at the latest if no holder
	// renews and no one else takes it, not when one will free: a release
	// can free one at any moment, and with long leases that are renewed it
	// may be far off. It is 0 when Acquired or when no lapse is scheduled.
	// For when to come back, see RetryAfter.
	EarliestLapse time.Duration

	// Weight is the number of units the caller holds after the call: n
	// when Acquired, and when a re-weigh was refused, the units it still
	// holds from before. A Counter's Weight is 1 when Acquired.
	Weight int64
}

// RetryAfter is when a refused caller should try again, in a form that
// suits an HTTP Retry-After header: 0 when Acquired; otherwise
// EarliestLapse when that is under a second, and one second when it is
// not, since units are freed by releases at moments no one can foresee
// and a second is the least a Retry-After header can say. Format it for
// the header as strconv.Itoa(int(math.Ceil(res.RetryAfter().Seconds()))).
//
// Choose by who waits. A caller in this process should not sleep on
// either figure: Acquire waits and is woken by the release itself. A
// client that cannot be woken, such as an HTTP client told 429, comes
// back after RetryAfter. EarliestLapse is for monitoring and for callers
// that know their holders release only by lapsing.
func (r Result) RetryAfter() time.Duration {
	switch {
	case r.Acquired:
		return 0
	case r.EarliestLapse > 0 && r.EarliestLapse < time.Second:
		return r.EarliestLapse
	}
	return time.Second
}

// Holder is one live lease.
type Holder struct {
	ID        string    // the holder ID passed to TryAcquire or Acquire
	ExpiresAt time.Time // when the lease lapses unless renewed, by the Redis server's clock
	Weight    int64     // units held: 1, or n from TryAcquireN and AcquireN
}

// slots is what a Limiter and a Counter share: a checked Config, the
// client, and the script arguments that never change, formatted once.
type slots struct {
	client redis.UniversalClient
	cfg    Config
	limit  any // cfg.Limit as a script argument, a string boxed once
	ttl    any // cfg.TTL in ms as a script argument, a string boxed once
}

func newSlots(client redis.UniversalClient, cfg Config, defaultTTL time.Duration) (slots, error) {
	cfg, err := cfg.check(defaultTTL)
	if err != nil {
		return slots{}, err
	}
	if client == nil || reflect.ValueOf(client).Kind() == reflect.Pointer && reflect.ValueOf(client).IsNil() {
		return slots{}, invalidConfig("client is nil")
	}
	return slots{
		client: client,
		cfg:    cfg,
		limit:  strconv.FormatInt(cfg.Limit, 10),
		ttl:    formatMillis(cfg.TTL),
	}, nil
}
