package ratelimit

import (
	"errors"
	"fmt"
	"time"

	"github.com/slotlimit/slotlimit/internal/kernel"
)

// errs is the package's error set: every error a method returns names the
// package, the method and the key.
var errs = kernel.NewErrors("ratelimit")

var (
	// ErrInvalidConfig is returned by New for a nil client (untyped, or a
	// typed nil such as a nil *redis.Client), and by every method of a
	// zero or nil Limiter, one not made by New. Nothing is sent to Redis.
	ErrInvalidConfig = errs.InvalidConfig

	// ErrInvalidArgument is returned by every method given an argument no
	// call could work with: a nil ctx, or any of the errors below but
	// ErrOutcomeUnknown, which all match it. Nothing is sent to Redis.
	ErrInvalidArgument = errs.InvalidArgument

	// ErrInvalidLimit is returned when a Limit cannot be kept: a Rate
	// below 1 or above MaxRate, a Period under a millisecond or not a
	// whole number of milliseconds, a Burst below 0 or above MaxRate, an
	// unknown Algorithm, a FixedWindow limit whose Burst is neither 0 nor
	// Rate or whose Period is longer than MaxBurstTime, or a GCRA limit
	// whose share of a period per event (Period/Rate) is under a
	// microsecond, whose full burst (Burst×Period/Rate) is longer than
	// MaxBurstTime, or whose rate the server's clock cannot keep within
	// 1% (an *InexactLimitError, which names the nearest Limit it keeps
	// exactly). It is also returned for an AllowAll with no rules. It
	// matches ErrInvalidArgument. Nothing is sent to Redis.
	ErrInvalidLimit = errs.Kind("invalid limit")

	// ErrInvalidN is returned by AllowN and AllowAll when n is negative
	// or above MaxRate, more events than the scripts count exactly and
	// more than any Limit allows. It matches ErrInvalidArgument. Nothing
	// is sent to Redis.
	ErrInvalidN = errs.Kind("invalid n")

	// ErrInvalidKey is returned when a key is empty, has a '}' but no
	// hash tag (no name of this package's can share its hash slot), is a
	// key that a package of this module keeps beside another key (such as
	// "{k}/ratelimit", a GCRA limit's data, or "{k}/recent"), or appears
	// twice in an AllowAll. It matches ErrInvalidArgument. Nothing is
	// sent to Redis.
	ErrInvalidKey = errs.Kind("invalid key")

	// ErrCrossSlot is returned by AllowAll when its keys do not all share
	// one Redis Cluster hash slot (on a Ring, one hash tag), on any
	// client, so that a program behaves the same on a single server and
	// on a Cluster. Put a common hash tag in the keys, as "{tenant:7}" and
	// "{tenant:7}:user:42". It matches ErrInvalidArgument. Nothing is sent
	// to Redis.
	ErrCrossSlot = errs.Kind("keys in more than one hash slot")

	// ErrOutcomeUnknown is matched by every error of a call that was sent
	// to Redis and got no answer: the connection broke or timed out, or
	// the context ended mid-call, so the call may or may not have taken
	// effect. Calling again is safe: Reset made again deletes again, and
	// AllowN and AllowAll made again count anew, against what the first
	// call may have counted, so they can refuse early but never admit
	// beyond the limit (see AllowN). It is the one value every package of
	// the module shares: errors.Is(err, slotlimit.ErrOutcomeUnknown)
	// agrees. Invalid input, and a Redis error reply such as WRONGTYPE,
	// never match it.
	ErrOutcomeUnknown = kernel.ErrOutcomeUnknown
)

// An InexactLimitError is the error, matching ErrInvalidLimit and so
// ErrInvalidArgument, of a GCRA Limit with a Burst of 1 whose share of a
// period per event (Period/Rate) is not a whole number of µs and would
// run more than 1% below its Rate. With a Burst of 1 no two events may be
// less than a share apart, and the server's clock counts whole µs, so
// events are in effect the share rounded up to the µs apart: 300,000 per
// second (3⅓µs an event) would admit one event per 4µs, 250,000 per
// second. A Burst of 2 or more keeps any Rate exactly, and so does a
// share of whole µs. Nothing is sent to Redis.
type InexactLimitError struct {
	Limit   Limit         // the Limit given, its Burst filled in
	Spacing time.Duration // the least time between events: Period/Rate, rounded up to the µs
	Nearest Limit         // the nearest Limit kept exactly: Limit with a Burst of 2
}

func (e *InexactLimitError) Error() string {
	return fmt.Sprintf("%v: %v: a Burst of 1 keeps events %v apart on the server's clock of whole µs, at most %d per %v; %v keeps the rate exactly",
		ErrInvalidLimit, e.Limit, e.Spacing, e.Limit.Period/e.Spacing, e.Limit.Period, e.Nearest)
}

// Unwrap returns ErrInvalidLimit.
func (e *InexactLimitError) Unwrap() error { return ErrInvalidLimit }

// errBadRecord is the error of Limit when the rate record's name holds a
// string that is not a rate record a Limiter writes.
var errBadRecord = errors.New("the rate record beside the key holds no limit a Limiter writes")

// invalid returns an error matching sentinel, one of the specific input
// errors above, that says what is wrong.
func invalid(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)
}
