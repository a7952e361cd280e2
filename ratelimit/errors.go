package ratelimit

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalidLimit is returned when a Limit cannot be kept: a Rate
	// below 1 or above MaxRate, a Period under a millisecond or not a
	// whole number of milliseconds, a Burst below 0 or above MaxRate, an
	// unknown Algorithm, a FixedWindow limit whose Burst is neither 0 nor
	// Rate or whose Period is longer than MaxBurstTime, or a GCRA limit
	// whose share of a period per event (Period/Rate) is under a
	// microsecond or whose full burst (Burst×Period/Rate) is longer than
	// MaxBurstTime. It is also returned for an AllowAll with no rules.
	// Nothing is sent to Redis.
	ErrInvalidLimit = errors.New("ratelimit: invalid limit")

	// ErrInvalidN is returned by AllowN and AllowAll when n is negative
	// or above MaxRate, more events than the scripts count exactly and
	// more than any Limit allows. Nothing is sent to Redis.
	ErrInvalidN = errors.New("ratelimit: invalid n")

	// ErrInvalidKey is returned when a key is empty, or when one key
	// appears twice in an AllowAll. Nothing is sent to Redis.
	ErrInvalidKey = errors.New("ratelimit: invalid key")

	// ErrCrossSlot is returned by AllowAll when its keys do not all share
	// one Redis Cluster hash slot (on a Ring, one hash tag), on any
	// client, so that a program behaves the same on a single server and
	// on a Cluster. Put a common hash tag in the keys, as "{tenant:7}" and
	// "{tenant:7}:user:42". Nothing is sent to Redis.
	ErrCrossSlot = errors.New("ratelimit: keys in more than one hash slot")

	// ErrInvalidArgument is returned by every method given a nil ctx.
	// Nothing is sent to Redis.
	ErrInvalidArgument = errors.New("ratelimit: invalid argument")

	// ErrNoClient is returned by every method of a Limiter made by New
	// with a nil client, of a zero Limiter and of a nil *Limiter.
	ErrNoClient = errors.New("ratelimit: no Redis client")
)

// errNilContext is the error of every call given a nil ctx.
var errNilContext = invalid(ErrInvalidArgument, "ctx is nil")

func invalid(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)
}
