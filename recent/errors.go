package recent

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalidConfig is returned by New when the client or the Config
	// cannot work, and by every method of a zero or nil List. New refuses
	// a nil client, an empty Key, a Max below 1, and a TTL or MaxAge that
	// is negative, or above 0 but under a millisecond.
	ErrInvalidConfig = errors.New("recent: invalid config")

	// ErrInvalidArgument is returned, with nothing sent, for a negative
	// offset or count, and for more than MaxBatch values in one call.
	ErrInvalidArgument = errors.New("recent: invalid argument")
)

func invalidConfig(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}

func invalidArgument(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}

// errUnusable is the error of every method of a zero or nil List.
var errUnusable = fmt.Errorf("%w: not made by New", ErrInvalidConfig)
