package recent

import (
	"errors"
	"fmt"

	"github.com/slotlimit/slotlimit"
)

var (
	// ErrInvalidConfig is returned by New when the client or the Config
	// cannot work, and by every method of a zero or nil List. New refuses
	// a nil client, an empty Key, a Max below 1 or above MaxItems, and a
	// TTL or MaxAge that is negative, above 0 but under a millisecond, or
	// above MaxDuration.
	ErrInvalidConfig = errors.New("recent: invalid config")

	// ErrInvalidArgument is returned, with nothing sent, for a negative
	// offset or count, for more than MaxBatch values in one call, and for
	// a nil ctx.
	ErrInvalidArgument = errors.New("recent: invalid argument")

	// ErrOutcomeUnknown matches the error of an Add or Remove that was
	// sent and got no answer (the connection broke or timed out, or ctx
	// ended mid-call): it may or may not have taken effect. Call again
	// with the same values; each method's doc says what that changes. It
	// is one value, shared by every package of the module:
	// errors.Is(err, slotlimit.ErrOutcomeUnknown) agrees. A Redis error
	// reply (such as WRONGTYPE) and an error returned before anything was
	// sent never match it.
	ErrOutcomeUnknown = slotlimit.ErrOutcomeUnknown
)

func invalidConfig(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}

func invalidArgument(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}

// unusable returns the error of method op of a zero or nil List, as
// `recent: add: invalid config: List not made by New`.
func unusable(op string) error {
	return fmt.Errorf("recent: %s: invalid config: List not made by New%w", op, silent{ErrInvalidConfig})
}

// silent wraps an error and prints nothing, so that a message can match
// an error without printing its text.
type silent struct{ err error }

func (s silent) Error() string { return "" }
func (s silent) Unwrap() error { return s.err }
