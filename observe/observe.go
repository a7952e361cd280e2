// Package observe is what every slotlimit primitive reports as it runs:
// set an Observer on a primitive's Config.Observer to be told of each
// call's outcome (units taken or refused, a lease released or renewed, a
// message pushed, an error), of waits and hand-overs before it, and of
// leases lost. Slog logs events; the module
// github.com/slotlimit/slotlimit/otel turns them into OpenTelemetry
// metrics and spans. With no Observer set, a call allocates nothing more.
package observe

import (
	"context"
	"time"
)

// An Observer is told of each Event as it happens, on the goroutine of the
// call that made it, so it must be quick and safe for concurrent use. It
// must not call back into the primitive that reports to it.
type Observer interface {
	Observe(ctx context.Context, e Event)
}

// A Kind is what an Event reports.
type Kind uint8

const (
	// Acquired: a call took units, or a lock. InUse is the units in use
	// after it, Units the call's.
	Acquired Kind = iota + 1
	// Refused: a try found no room and took nothing. InUse is the units
	// in use.
	Refused
	// Waited: a call waited in the queue before it took units or gave up;
	// Duration is the wait, from its first refused try. An Acquired or an
	// Error follows.
	Waited
	// HandedOver: a waiter was handed units by a release, and returns
	// with them; Duration runs from the release, on the server's clock,
	// to the return, on the local clock, so it includes their skew. An
	// Acquired follows.
	HandedOver
	// Released: a call freed a lease. Held says whether it was live.
	Released
	// Renewed: a call extended a lease. Held says whether it was live.
	Renewed
	// LeaseLost: a lease held in process was found gone, or could not be
	// renewed before it must have lapsed. Err says why, when known.
	LeaseLost
	// Error: a call failed; Err is its error.
	Error
	// Done: a call that neither takes nor frees units, such as a push,
	// an add or a create, took effect.
	Done
	// LimitChanged: a call moved a shared adaptive limit (package
	// "adaptive"). Limit is the new limit, Units the limit before it, and
	// InUse the units in use after the call. The call's final event
	// follows.
	LimitChanged
)

var kindNames = [...]string{
	Acquired: "acquired", Refused: "refused", Waited: "waited", HandedOver: "handed_over",
	Released: "released", Renewed: "renewed", LeaseLost: "lease_lost", Error: "error", Done: "done",
	LimitChanged: "limit_changed",
}

// String returns the kind's name in snake case, such as "handed_over".
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// Final reports whether k ends a call: every call reports exactly one of
// Acquired, Refused, Released, Renewed, Done and Error, last.
func (k Kind) Final() bool {
	switch k {
	case Acquired, Refused, Released, Renewed, Done, Error:
		return true
	}
	return false
}

// An Event is one thing a primitive reports.
type Event struct {
	Kind    Kind
	Package string // the reporting package: "slotlimit", "lock", "ratelimit", "delayqueue", "redpacket", "recent" or "adaptive"
	Op      string // the call, as named in the API: "TryAcquire", "Acquire", "Release", "Lock", "Unlock", ...
	Key     string // the primitive's Config.Key, or the key of the call
	Holder  string // whom the call is for: a holder ID, a lock's owner token, a message ID, a user; or ""

	Units int64 // units the call asked for or took: 1 for a lock; the events of a rate limit; the messages or items written; LimitChanged: the limit before
	InUse int64 // Acquired, Refused and LimitChanged: units in use after the call, as the reply said; else -1
	Limit int64 // the limit the call ran under: 1 for a lock; 0 when there is none
	Held  bool  // Released and Renewed: whether the lease was live

	// Start is when the call began, on the local clock.
	Start time.Time
	// Duration is, for a final kind, the call's, and for Waited and
	// HandedOver as they say.
	Duration time.Duration
	// Err is the error of an Error, and the cause of a LeaseLost.
	Err error

	// Latency and NoLoadLatency are, for the LimitChanged and Released
	// events of package "adaptive" with Config.RTTTolerance set, the
	// shared latency estimate after the call: the recent latency and the
	// no-load latency (see adaptive.Info); 0 when none is known.
	Latency, NoLoadLatency time.Duration
}
