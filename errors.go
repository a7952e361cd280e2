package slotlimit

import (
	"errors"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/kernel"
)

// errs makes every error of this package, each naming the package, the
// method and the key.
var errs = kernel.NewErrors("slotlimit")

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
	ErrInvalidConfig = errs.InvalidConfig

	// ErrInvalidArgument is returned, with nothing sent to Redis, for an
	// argument no call could work with: a nil context, a nil function
	// given to Do, and every ErrInvalidHolder and ErrInvalidWeight, which
	// match it too.
	ErrInvalidArgument = errs.InvalidArgument

	// ErrInvalidHolder is returned when a holder ID is empty or longer than
	// MaxHolderLen bytes. Nothing is sent to Redis. It matches
	// ErrInvalidArgument.
	ErrInvalidHolder = errs.Kind("invalid holder")

	// ErrInvalidWeight is returned by TryAcquireN and AcquireN when n is
	// below 1 or above the Limit, which no wait could ever satisfy.
	// Nothing is sent to Redis. It matches ErrInvalidArgument.
	ErrInvalidWeight = errs.Kind("invalid weight")

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
	ErrNotReplicated = errs.NotReplicated

	// ErrNotHeld is returned when the caller no longer holds what it
	// names: by Renew when the holder's lease had lapsed or was released
	// (it is not taken again), by Release when the holder held no live
	// lease, so there was nothing of its to free (a Lease's Release also
	// when the Lease was already released), and by a Counter's Release
	// when the count was already 0. It is also the cause of a KeepAlive
	// context's cancellation when the lease was lost: a renewal found it
	// gone, or renewals failed until it must have lapsed.
	ErrNotHeld = errs.NotHeld
)

// sentNothing reports whether err is one that this package returns
// before anything is sent to Redis.
func sentNothing(err error) bool {
	return errors.Is(err, ErrInvalidConfig) || errors.Is(err, ErrInvalidArgument)
}

// outcomeUnknown reports whether err, from a call that was sent, leaves
// it open whether a script ran; a context that ended while the call
// waited counts too.
func outcomeUnknown(err error) bool {
	return !sentNothing(err) && callerr.OutcomeUnknown(err)
}
