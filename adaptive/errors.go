package adaptive

import (
	"errors"
	"fmt"

	"github.com/slotlimit/slotlimit"
)

var (
	// ErrLimited is returned by TryAcquire when every slot the shared
	// limit allows is in use. Nothing was taken.
	ErrLimited = errors.New("adaptive: limited")

	// ErrNotHeld is returned by Success, Dropped and Ignore when the Slot
	// holds nothing to free: its lease lapsed (it was held past TTL), it
	// was freed already, or the Slot is nil. Nothing was freed and the
	// outcome was not counted.
	ErrNotHeld = errors.New("adaptive: not held")

	// ErrInvalidConfig is returned by New when the client is nil or the
	// Config cannot work, naming the field, and by every method of a zero
	// or nil Limiter. Nothing was sent.
	ErrInvalidConfig = errors.New("adaptive: invalid config")

	// ErrInvalidArgument is returned by every method given an argument no
	// call could work with: a nil context. Nothing was sent.
	ErrInvalidArgument = errors.New("adaptive: invalid argument")

	// ErrNotReplicated is returned when Config.Replicas is set and fewer
	// replicas than that acknowledged a write within
	// Config.ReplicaTimeout. The write was made on the master, and may be
	// lost if it fails over now: a slot taken that way counts as not taken
	// (TryAcquire and Acquire free it before they return), and a Success,
	// Dropped or Ignore may have to be repeated.
	ErrNotReplicated = errors.New("adaptive: write not acknowledged by enough replicas")

	// ErrOutcomeUnknown is matched by every error of a call that was sent
	// to Redis and got no answer: the connection broke or timed out, or
	// the context ended mid-call, so the call may or may not have taken
	// effect. Call again with the same arguments: a Slot's Success,
	// Dropped and Ignore free one slot and count one outcome however
	// often they are sent, and TryAcquire and Acquire free what they may
	// have taken before they return such an error. It is
	// slotlimit.ErrOutcomeUnknown, the one value every package of the
	// module shares.
	ErrOutcomeUnknown = slotlimit.ErrOutcomeUnknown
)

func invalidConfig(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}

// errNilContext is the error of every call given a nil context.
var errNilContext = fmt.Errorf("%w: nil context", ErrInvalidArgument)

// errUnusable is the error of every method of a zero or nil Limiter.
var errUnusable = fmt.Errorf("%w: not made by New", ErrInvalidConfig)
