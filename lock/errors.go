package lock

import (
	"errors"
	"fmt"

	"github.com/slotlimit/slotlimit"
)

var (
	// ErrNotObtained is returned by TryLock when another owner holds the
	// lock. Nothing was taken.
	ErrNotObtained = errors.New("lock: not obtained")

	// ErrNotHeld is returned by Refresh and Unlock when the lock is no
	// longer held by its owner: it lapsed, was broken, or was never
	// obtained (a nil *Lock); and by Break when the owner it names no
	// longer holds the lock. It is also the cause of a KeepAlive
	// context's cancellation when the lock is lost.
	ErrNotHeld = errors.New("lock: not held")

	// ErrInvalidConfig is returned by New when the client or the Config
	// cannot work, and by every method of a zero or nil Mutex. New refuses
	// a nil client, an empty Key, a Key with a '}' but no hash tag, a Key
	// that names another lock's side key, a negative TTL, one above 0 but
	// under a millisecond or one above MaxTTL, a negative Replicas, and a
	// negative ReplicaTimeout or one above 0 but under a millisecond.
	ErrInvalidConfig = errors.New("lock: invalid config")

	// ErrInvalidArgument is returned by every method given an argument no
	// call could work with: a nil context, or an empty token to Break.
	// Nothing was sent.
	ErrInvalidArgument = errors.New("lock: invalid argument")

	// ErrOutcomeUnknown is matched by every error of a call that was sent
	// to Redis and got no answer: the connection broke or timed out, or
	// the context ended mid-call, so the call may or may not have taken
	// effect. Call again with the same arguments: every call of this
	// package takes effect once, however often it is sent (each method's
	// doc says what a call made again answers). It is
	// slotlimit.ErrOutcomeUnknown, the one value every package of the
	// module shares. Invalid input, and a Redis error reply such as
	// WRONGTYPE, never match it.
	ErrOutcomeUnknown = slotlimit.ErrOutcomeUnknown

	// ErrNotReplicated is returned when Config.Replicas is set and fewer
	// replicas than that acknowledged a write within the timeout. The
	// write was made on the master and may be lost if it fails over now: a
	// lock taken that way counts as not taken (Lock and TryLock unlock it
	// before they return), and an Unlock or Refresh may have to be repeated.
	ErrNotReplicated = errors.New("lock: write not acknowledged by enough replicas")
)

func invalidConfig(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}

// errNilContext is the error of every call given a nil context.
var errNilContext = fmt.Errorf("%w: nil context", ErrInvalidArgument)

// errEmptyToken is the error of a Break given an empty token.
var errEmptyToken = fmt.Errorf("%w: empty token", ErrInvalidArgument)

// errUnusable is the error of every method of a zero or nil Mutex.
var errUnusable = fmt.Errorf("%w: not made by New", ErrInvalidConfig)
