package slotlimit

import (
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/observe"
)

// MaxLimit is the highest Config.Limit: the scripts count units in Lua
// numbers, which are exact up to 2^53, and report a refusal as -1 - units,
// which stays exact while units stay below 2^53.
const MaxLimit = 1<<53 - 1

// MaxTTL is the longest Config.TTL. A lease is meant to be renewed or
// released; one that outlives a year is a mistake, such as a TTL of
// math.MaxInt64 meant as "for ever", and New refuses it rather than hold
// a slot for centuries. Every deadline, the server's clock in ms plus a
// lease time, then stays far below 2^53, where Lua numbers stop being
// exact.
const MaxTTL = 365 * 24 * time.Hour

// Default lease times, used when Config.TTL is 0.
const (
	DefaultTTL        = 5 * time.Minute
	DefaultCounterTTL = 300 * time.Second
)

// Config describes one set of slots.
//
// A Limiter or a Counter records its Limit, and a Limiter its TTL, beside
// Key, so that operators and tools read them without being told (see
// Recorded and Limits): at "{Key}/limit", or "Key:limit" for a Key with a
// hash tag, a string such as "lease=300000&limit=60" (the lease time in
// ms), or "limit=60" for a Counter. Each Limiter or Counter writes it with
// one SET before its first call that takes or renews a slot, then at most
// once a minute while it is used, never on every call; releases and reads
// write nothing. It expires a minute after the longest
// the data can outlive the call that wrote it (a Limiter's TTL and a
// queue entry's few seconds; a Counter's TTL), so it outlives the data
// while calls go on, and lapses within a minute after the data once they
// stop. A write that fails fails no call, and is tried again on the next.
// When Limiters with different Limits share a Key, the record is that of
// the last to write it.
type Config struct {
	// Key is the Redis key that holds the slots, e.g. "ar:" + areaCode.
	// Every Limiter and Counter built with the same Key shares the same slots.
	// A Key that another package of this module keeps beside a key (such
	// as "{k}/recent", a recent list's) is refused, so that a Limiter never
	// meets another package's data.
	Key string

	// Limit is the most holders at once, or units when leases weigh more
	// than one; it must be at least 1 and at most MaxLimit.
	Limit int64

	// TTL is the lease time: a slot that is neither renewed nor released
	// is freed this long after it was taken. It is kept to the millisecond,
	// and must be at least a millisecond and at most MaxTTL. 0 means
	// DefaultTTL for a Limiter and DefaultCounterTTL for a Counter.
	TTL time.Duration

	// Fair makes waiters take slots in the order they began to wait, across
	// every process, at the cost of a few more Redis commands per call
	// (waits begun within a round trip of each other are in the order
	// their tries reached Redis, which coalescing may change). A
	// TryAcquire never waits, so in fair mode it succeeds only when the
	// slots cover every waiter queued ahead as well. Every Limiter on one
	// Key should agree on Fair. A Counter ignores it.
	Fair bool

	// Replicas, when above 0, makes every write wait until that many
	// replicas have it (Redis WAIT), so that a lease survives a failover
	// to one of them. A write they do not acknowledge within
	// ReplicaTimeout fails with ErrNotReplicated. Each write then costs a
	// round trip to the replicas.
	// A call whose WAIT a failover cut short returns an error matching
	// ErrOutcomeUnknown. 0, the default, leaves replication asynchronous:
	// an operator's CLUSTER FAILOVER loses nothing, since the replica
	// catches up first, but a forced takeover can lose the last writes
	// the old master acknowledged: a lease taken there is not counted, and a release
	// made there is undone, its lease held until it lapses.
	Replicas int

	// ReplicaTimeout bounds the wait for Replicas; 0 means one second.
	ReplicaTimeout time.Duration

	// CountRefusals makes the Limiter count, in Redis, the calls it
	// refuses without waiting (TryAcquire and its kin; an Acquire that
	// waits is not refused), in a key beside Key, for operators: see
	// Limiter.Refusals and the slotlimit command's watch. Each refusal
	// then costs one more command on the server. The count starts again
	// a day after it began. A Counter ignores it. The count is of runs: a
	// refused call whose reply was lost, and which the go-redis client
	// therefore sent again, is counted each time it ran, so the count can
	// run high, never low.
	CountRefusals bool

	// DisableCoalescing sends each call to Redis as its own script call.
	// By default, concurrent calls of one kind on the Key, made through
	// one Limiter, share one script call: the tries of TryAcquire and its
	// kin, and those of waiting acquires (Acquire, AcquireLease, Do), each
	// kind of one weight; releases; and renewals (a Lease's too). Each
	// caller gets its own result, error and Observer event, as it would
	// alone; a lone caller is sent at once. A Counter ignores it.
	DisableCoalescing bool

	// Observer, if set, is told of each call's outcome, once, as its final
	// event: Acquired or Refused for a try or an acquire, Released or
	// Renewed (with Held) for a release or a renewal, Error (with Err) for
	// a call that failed after it was sent. A Limiter's Acquire reports
	// Waited and HandedOver before its final event, and a Lease kept alive
	// reports LeaseLost when it is lost. observe.Slog logs events; the
	// module github.com/slotlimit/slotlimit/otel records them as
	// OpenTelemetry metrics and spans. nil, the default, costs nothing.
	// The batch calls (TryAcquireBatch, ReleaseBatch) report each
	// holder's outcome as its single call would.
	Observer observe.Observer
}

// check checks c's Limit and TTL, which are this package's own (New
// checks the rest), and fills in the default TTL.
func (c Config) check(defaultTTL time.Duration) (Config, error) {
	if c.Limit < 1 || c.Limit > MaxLimit {
		return c, errs.Config("Limit is %d, must be 1 to %d", c.Limit, int64(MaxLimit))
	}
	if err := errs.Duration("TTL", c.TTL, MaxTTL); err != nil {
		return c, err
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
