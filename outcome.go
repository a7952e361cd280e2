package slotlimit

import "github.com/slotlimit/slotlimit/internal/callerr"

// ErrOutcomeUnknown matches every error of a call that may have taken
// effect with no answer to say whether it did: the call was sent and the
// connection broke or timed out, or the context ended mid-call; or a reply
// came that can follow a write, such as WAIT's UNBLOCKED when a failover
// cut it short after the write ran, or a LOADING, READONLY, MOVED or
// CLUSTERDOWN met by a try sent again after an earlier try's answer was
// lost. Call again with the same arguments: every write of every package
// in this module takes effect once, however often it is sent, or its doc
// says exactly what a second run does.
//
// It is one value, shared by every package of the module:
// lock.ErrOutcomeUnknown, ratelimit.ErrOutcomeUnknown and the others are
// this one. A Redis error reply that refuses a command before it runs
// (such as WRONGTYPE, NOPERM or an argument's ERR) is a known outcome and
// does not match it, nor does an error of a call that never reached a
// server (invalid input, a refused dial, a context that ended before
// anything was sent).
var ErrOutcomeUnknown = callerr.ErrOutcomeUnknown
