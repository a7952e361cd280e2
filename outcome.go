package slotlimit

// ErrOutcomeUnknown matches every error of a call that was sent to Redis
// and got no answer: the connection broke or timed out, or the context
// ended mid-call. The call may or may not have taken effect. Call again
// with the same arguments: every write of every package in this module
// takes effect once, however often it is sent, or its doc says exactly
// what a second run does.
//
// It is one value, shared by every package of the module:
// lock.ErrOutcomeUnknown, ratelimit.ErrOutcomeUnknown and the others are
// this one. A Redis error reply (such as WRONGTYPE) is a known outcome and
// does not match it, nor does an error returned before anything was sent.
var ErrOutcomeUnknown error = outcomeUnknownError{}

type outcomeUnknownError struct{}

func (outcomeUnknownError) Error() string { return "slotlimit: outcome unknown" }

// OutcomeUnknown marks the value for the module's errors, which match it
// when their outcome is unknown.
func (outcomeUnknownError) OutcomeUnknown() {}
