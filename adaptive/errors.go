package adaptive

import (
	"errors"

	"github.com/slotlimit/slotlimit/internal/kernel"
)

// errs makes every error of the package, each naming the method and the
// key: `adaptive: success "payments": not held`.
var errs = kernel.NewErrors("adaptive")

var (
	// ErrLimited is returned by TryAcquire when every slot the shared
	// limit allows is in use. Nothing was taken.
	ErrLimited = errors.New("adaptive: limited")

	// ErrNotHeld is returned by Success, Dropped and Ignore when the Slot
	// holds nothing to free: its lease lapsed (it was held past TTL), or
	// it was freed already. Nothing was freed and the outcome was not
	// counted.
	ErrNotHeld = errs.NotHeld

	// ErrInvalidConfig is returned by New when the client is nil or the
	// Config cannot work, naming the field, and by every method of a value
	// not made by New: a zero or nil Limiter, a zero or nil Slot. Nothing
	// was sent.
	ErrInvalidConfig = errs.InvalidConfig

	// ErrInvalidArgument is returned by every method given an argument no
	// call could work with: a nil context. Nothing was sent.
	ErrInvalidArgument = errs.InvalidArgument

	// ErrNotReplicated is returned when Config.Replicas is set and fewer
	// replicas than that acknowledged a write within
	// Config.ReplicaTimeout. The write was made on the master, and may be
	// lost if it fails over now: a slot taken that way counts as not taken
	// (TryAcquire and Acquire free it before they return), and a Success,
	// Dropped or Ignore may have to be repeated.
	ErrNotReplicated = errs.NotReplicated

	// ErrOutcomeUnknown is matched by every error of a call that was sent
	// to Redis and got no answer: the connection broke or timed out, or
	// the context ended mid-call, so the call may or may not have taken
	// effect. Call again with the same arguments: a Slot's Success,
	// Dropped and Ignore free one slot and count one outcome however
	// often they are sent, and TryAcquire and Acquire free what they may
	// have taken before they return such an error. It is the one value
	// every package of the module exports under this name.
	ErrOutcomeUnknown = kernel.ErrOutcomeUnknown
)
