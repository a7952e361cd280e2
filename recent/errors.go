package recent

import "github.com/slotlimit/slotlimit/internal/kernel"

// errs is the package's error set: every error a method returns names the
// package, the method and the list's Key.
var errs = kernel.NewErrors("recent")

var (
	// ErrInvalidConfig is returned by New when the client or the Config
	// cannot work, and by every method of a zero or nil List. New refuses
	// a nil client, an empty Key, a Key that another package of the module
	// keeps beside another key, a Max below 1 or above MaxItems, and a
	// TTL or MaxAge that is negative, above 0 but under a millisecond, or
	// above MaxDuration.
	ErrInvalidConfig = errs.InvalidConfig

	// ErrInvalidArgument is returned, with nothing sent, for a negative
	// offset or count, for more than MaxBatch values in one call, and for
	// a nil ctx.
	ErrInvalidArgument = errs.InvalidArgument

	// ErrOutcomeUnknown matches the error of an Add or Remove that was
	// sent and got no answer (the connection broke or timed out, or ctx
	// ended mid-call): it may or may not have taken effect. Call again
	// with the same values; each method's doc says what that changes. It
	// is one value, shared by every package of the module:
	// errors.Is(err, slotlimit.ErrOutcomeUnknown) agrees. A Redis error
	// reply (such as WRONGTYPE) and an error returned before anything was
	// sent never match it.
	ErrOutcomeUnknown = kernel.ErrOutcomeUnknown
)
