package slotlimit

import (
	"context"
	"errors"
	"fmt"

	"github.com/slotlimit/slotlimit/internal/callerr"
)

var (
	// ErrInvalidConfig is returned by New and NewCounter when the client
	// or the Config cannot work, and by every method of a zero or nil
	// Limiter, Counter or Lease, which were not made by New or NewCounter.
	// New and NewCounter refuse:
	//   - a nil client;
	//   - an empty Key;
	//   - a Limit below 1 or above MaxLimit;
	//   - a negative TTL, one above 0 but under a millisecond, or one
	//     above MaxTTL;
	//   - a negative Replicas or ReplicaTimeout, or a ReplicaTimeout
	//     above 0 but under a millisecond.
	// Both refuse a Key that has a '}' but no hash tag, since no tag can
	// keep the keys beside it in its cluster slot, and a Key that a
	// package of this module keeps beside another key: one with a hash
	// tag that ends in ':' or '/' and w, q, qd, qw, refused or
	// full:<digits> (a Limiter's), or released:<id> (a Counter's), or
	// that holds ':' or '/' and recent, delayqueue, ratelimit, lock,
	// redpacket or adaptive (another package's).
	ErrInvalidConfig = errors.New("slotlimit: invalid config")

	// ErrInvalidArgument is returned, with nothing sent to Redis, for an
	// argument no call could work with: a nil context, a nil function
	// given to Do, and every ErrInvalidHolder and ErrInvalidWeight, which
	// match it too.
	ErrInvalidArgument = errors.New("slotlimit: invalid argument")

	// ErrInvalidHolder is returned when a holder ID is empty or longer than
	// MaxHolderLen bytes. Nothing is sent to Redis. It matches
	// ErrInvalidArgument.
	ErrInvalidHolder error = &argumentError{"slotlimit: invalid holder"}

	// ErrInvalidWeight is returned by TryAcquireN and AcquireN when n is
	// below 1 or above the Limit, which no wait could ever satisfy.
	// Nothing is sent to Redis. It matches ErrInvalidArgument.
	ErrInvalidWeight error = &argumentError{"slotlimit: invalid weight"}

	// ErrNotAcquired is returned by TryAcquireLease when the units it asks
	// for are not free, so that a refusal takes the error path:
	//
	//	lease, err := limiter.TryAcquireLease(ctx, 1)
	//	if errors.Is(err, slotlimit.ErrNotAcquired) {
	//		return errBusy // nothing is held
	//	}
	ErrNotAcquired = errors.New("slotlimit: not acquired")

	// ErrNotReplicated is returned when Config.Replicas is set and fewer
	// replicas than that acknowledged a write within Config.ReplicaTimeout.
	// The write was made on the master, and may be lost if it fails over now:
	// a lease taken that way counts as not taken (AcquireN releases it; a
	// caller of TryAcquire should Release or try again), and a release or
	// renewal may have to be repeated.
	ErrNotReplicated = errors.New("slotlimit: write not acknowledged by enough replicas")

	// ErrNotHeld is returned when the caller no longer holds what it
	// names: by Renew when the holder's lease had lapsed or was released
	// (it is not taken again), by Release when the holder held no live
	// lease, so there was nothing of its to free, and by a Counter's
	// Release when the count was already 0. It is also the cause of a
	// KeepAlive context's cancellation when the lease was lost: a renewal
	// found it gone, or renewals failed until it must have lapsed.
	ErrNotHeld = errors.New("slotlimit: not held")
)

// An argumentError is a kind of invalid argument, with a name of its own:
// it matches ErrInvalidArgument.
type argumentError struct{ text string }

func (e *argumentError) Error() string { return e.text }

func (e *argumentError) Is(target error) bool { return target == ErrInvalidArgument }

// errNilContext is the error of every call given a nil context.
var errNilContext = fmt.Errorf("%w: nil context", ErrInvalidArgument)

// errUnusable is the error of every method of a zero or nil Limiter,
// Counter or Lease.
var errUnusable = fmt.Errorf("%w: not made by New or NewCounter", ErrInvalidConfig)

func invalidConfig(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}

// sentNothing reports whether err is one that this package returns
// before anything is sent to Redis.
func sentNothing(err error) bool {
	return errors.Is(err, ErrInvalidConfig) || errors.Is(err, ErrInvalidArgument)
}

// outcomeUnknown reports whether err leaves it open whether a script ran.
// This package's own errors are returned before anything is sent.
func outcomeUnknown(err error) bool {
	return !sentNothing(err) && callerr.OutcomeUnknown(err)
}

// opError names the operation and the key, so that a WRONGTYPE reply or a
// connection error says which limiter it came from. It keeps err for errors.Is.
func opError(op, key string, err error) error {
	return callerr.Op("slotlimit", op, key, err)
}

// callError is opError for a call made with ctx: when ctx is done and err
// came from the connection, the error matches ctx.Err() as well as err
// (see callerr.Call).
func callError(ctx context.Context, op, key string, err error) error {
	return callerr.Call(ctx, "slotlimit", op, key, err)
}
