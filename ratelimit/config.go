package ratelimit

import "github.com/slotlimit/slotlimit/observe"

// Config describes a Limiter. Its zero value is valid: the limits are
// given with each call, not here.
type Config struct {
	// Observer, when not nil, is told of each call's outcome as one final
	// event, with Package "ratelimit" and Op the method's name ("Allow",
	// "AllowN", "AllowAll", "Reset"): Acquired when the events were
	// counted, Refused when they were not, Done for a Reset, and Error
	// with the call's error. For Allow and AllowN, Key is the call's key,
	// Units its n, Limit the most events the limit allows at once (Burst
	// for GCRA, Rate for FixedWindow) and InUse that less the Remaining
	// the reply reported. For AllowAll, Key is the rules' keys joined by
	// spaces, Units the events of every rule, and Limit and InUse are
	// those of the first rule. A call given a nil ctx, or made on a
	// Limiter not made by New, reports nothing. A nil Observer costs
	// nothing.
	Observer observe.Observer

	// DisableCoalescing sends each Allow and AllowN to Redis as its own
	// script call. By default, concurrent Allow and AllowN calls of one n
	// on one key and limit, made through the same Limiter, share one
	// script call; each caller gets its own Result, error and Observer
	// event, as it would alone, made in turn (see the package
	// documentation).
	DisableCoalescing bool
}
