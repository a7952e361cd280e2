package lock

import (
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/observe"
)

// DefaultTTL is the lease time used when Config.TTL is 0.
const DefaultTTL = 30 * time.Second

// MaxTTL is the longest Config.TTL. A lease is meant to be refreshed, or
// to lapse when its owner dies; a longer one is most likely a
// math.MaxInt64 meant as "for ever", which would hold a dead owner's lock
// for centuries, and New refuses it.
const MaxTTL = 365 * 24 * time.Hour

// Config describes one lock.
type Config struct {
	// Key is the Redis key that holds the lock's owner token. Every Mutex
	// built with the same Key guards the same lock; so do redislock,
	// redsync and the classic SET NX PX scripts, which keep the same data
	// there (the plain string holding the owner's token). A Key that a
	// package of this module keeps beside another key, such as
	// "{k}/recent", is refused, so that a lock never meets another
	// package's data.
	Key string

	// TTL is the lease time: a lock that is neither refreshed nor unlocked
	// is freed this long after it was taken or last refreshed, by the
	// Redis server's clock. It is kept to the millisecond, and must be at
	// least a millisecond and at most MaxTTL. 0 means DefaultTTL.
	TTL time.Duration

	// Owner describes the process that uses the Mutex, for operators:
	// Mutex.Inspect and the slotlimit command's lock info show it beside
	// the owner's token. It is at most MaxOwner bytes of UTF-8 with no
	// control characters; "" means the host's name and the process ID, as
	// "web-3 pid 4242". It is kept beside the key, not in it, at
	// "{k}/lock:owner:ID" ("{t}:x:lock:owner:ID" beside a key "{t}:x"),
	// where ID is the first 10 characters of each of the Mutex's tokens:
	// written at most once a minute, inside a call the Mutex makes anyway
	// (TryLock's, a waiter's try or a Refresh), so that it costs no round
	// trip, and expiring a minute and TTL after that, so that it outlives
	// every lease the Mutex holds. The string at the key stays the bare
	// token that redislock and redsync read.
	Owner string

	// Replicas, when above 0, makes every write of the lock wait until
	// that many replicas acknowledge it (Redis WAIT), so that a lock
	// survives a failover to one of them: a write they do not acknowledge
	// within ReplicaTimeout fails with ErrNotReplicated, and one whose
	// WAIT a failover cut short with ErrOutcomeUnknown. 0, the default,
	// leaves replication asynchronous, as Redis's is: a forced takeover
	// (not an operator's CLUSTER FAILOVER) can lose a lock taken, or an
	// unlock made, just before it; such an unlock is undone, and the lock
	// held until its lease lapses.
	Replicas int

	// ReplicaTimeout bounds the wait for Replicas, to the millisecond; 0
	// means one second.
	ReplicaTimeout time.Duration

	// Observer, if set, is told of each call's outcome as one final event:
	// Acquired or Refused for TryLock and Lock (with Units, Limit and
	// InUse 1), Renewed for Refresh, KeepAlive's refreshes included, and
	// Released for Unlock and Break (Held reports whether the owner still
	// held the lock), or Error with the call's error. Before the final
	// event, a Lock that waited reports Waited, and one handed the lock by
	// an Unlock reports HandedOver; a Lock found lost reports LeaseLost
	// once. Package is "lock", Key is Config.Key and Holder the owner's
	// token. Reads (Inspect) and calls refused before anything is sent
	// (invalid input) report nothing. nil, the default, costs nothing.
	Observer observe.Observer
}

// String describes the lock, e.g. `"jobs:nightly" lock, 30s leases`.
// It leaves out Owner.
func (c Config) String() string {
	return strconv.Quote(c.Key) + " lock, " + c.TTL.String() + " leases"
}
