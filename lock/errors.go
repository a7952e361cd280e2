package lock

import (
	"errors"

	"github.com/slotlimit/slotlimit/internal/kernel"
)

// errs makes every error of the package, each naming the method and the
// key: `lock: refresh "orders:42": not held`.
var errs = kernel.NewErrors("lock")

var (
	// ErrNotObtained is returned by TryLock when another owner holds the
	// lock. Nothing was taken.
	ErrNotObtained = errors.New("lock: not obtained")

	// ErrNotHeld is returned by Refresh and Unlock when the lock is no
	// longer held by its owner: it lapsed, was broken, or was unlocked
	// already (see Lock.Unlock for when a broken lock is reported
	// unlocked); and by Break when the owner it names no longer holds the
	// lock. It is also the cause of a KeepAlive context's cancellation
	// when the lock is lost.
	ErrNotHeld = errs.NotHeld

	// ErrInvalidConfig is returned by New when the client or the Config
	// cannot work, and by every method of a value not made by New: a zero
	// or nil Mutex, a zero or nil Lock. New refuses a nil client, an empty
	// Key, a Key with a '}' but no hash tag, a Key that a package of this
	// module keeps beside another key (such as another lock's queue), a
	// negative TTL, one above 0 but under a millisecond or one above
	// MaxTTL, a negative Replicas, and a negative ReplicaTimeout or one
	// above 0 but under a millisecond.
	ErrInvalidConfig = errs.InvalidConfig

	// ErrInvalidArgument is returned by every method given an argument no
	// call could work with: a nil context, or an empty token to Break.
	// Nothing was sent.
	ErrInvalidArgument = errs.InvalidArgument

	// ErrOutcomeUnknown is matched by every error of a call that was sent
	// to Redis and got no answer: the connection broke or timed out, or
	// the context ended mid-call, so the call may or may not have taken
	// effect. Call again with the same arguments: every call of this
	// package takes effect once, however often it is sent (each method's
	// doc says what a call made again answers). It is the one value every
	// package of the module exports under this name. Invalid input, and a
	// Redis error reply such as WRONGTYPE, never match it.
	ErrOutcomeUnknown = kernel.ErrOutcomeUnknown

	// ErrNotReplicated is returned when Config.Replicas is set and fewer
	// replicas than that acknowledged a write within the timeout. The
	// write was made on the master and may be lost if it fails over now: a
	// lock taken that way counts as not taken (Lock and TryLock unlock it
	// before they return), and an Unlock or Refresh may have to be repeated.
	ErrNotReplicated = errs.NotReplicated
)

// errEmptyToken is the error of a Break given an empty token.
var errEmptyToken = errs.Argument("empty token")
