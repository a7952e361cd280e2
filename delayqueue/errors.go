package delayqueue

import (
	"errors"
	"fmt"

	"github.com/slotlimit/slotlimit"
)

var (
	// ErrInvalidConfig is returned by New when the client or the Config
	// cannot work, and by every method of a zero or nil Queue. New refuses
	// a nil client, an empty Key, a Key with a '}' but no hash tag, a
	// negative Visibility, one
	// above 0 but under a millisecond or one above MaxDelay, and a
	// MaxAttempts that is negative or above math.MaxInt32.
	ErrInvalidConfig = errors.New("delayqueue: invalid config")

	// ErrNotHeld is returned by Ack, Nack and Extend when the delivery's
	// lease has lapsed: the message is due again (it may have been
	// delivered again already), or the delivery was given back or acked
	// (see Ack for a repeat of the same call). It is also the cause of
	// the cancellation of the handler's context in Run when the lease is
	// lost. A Message without an ID or a Token holds nothing either.
	ErrNotHeld = errors.New("delayqueue: lease not held")

	// ErrInvalidArgument is returned, with nothing sent, for a negative
	// or too long delay, a zero time or one before 1970 or after 2^53 ms
	// from it, a payload above MaxPayload, a batch above MaxBatch
	// messages or MaxBatchBytes, a bad count of workers or a nil handler
	// for Run, and a nil context, given to any method.
	ErrInvalidArgument = errors.New("delayqueue: invalid argument")

	// ErrOutcomeUnknown matches every error of a call that was sent to
	// Redis and got no answer: the connection broke or timed out, or the
	// context ended mid-call. The call may or may not have taken effect;
	// each method's doc says what calling it again does. It is one value,
	// shared by every package of the module: slotlimit.ErrOutcomeUnknown.
	// An error returned before anything was sent, ErrNotHeld, and a
	// Redis error reply (such as WRONGTYPE) never match it.
	ErrOutcomeUnknown = slotlimit.ErrOutcomeUnknown
)

func invalidConfig(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}

func invalidArgument(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}

// errNilContext is the error of every call given a nil context.
var errNilContext = fmt.Errorf("%w: nil context", ErrInvalidArgument)

// errUnusable is the error of every method of a zero or nil Queue.
var errUnusable = fmt.Errorf("%w: not made by New", ErrInvalidConfig)
