package adaptive

import (
	"context"
	"time"
)

// Info is the state of a shared limit at one moment, read by one script
// that writes nothing: for operators and tools, such as a view of the
// limit beside the slots in use.
type Info struct {
	// ServerTime is the Redis server's clock when the Info was read; every
	// time below is on that clock.
	ServerTime time.Time

	// Limit is the shared limit, within the Limiter's Min and Max: the one
	// stored, or Config.Initial when Stored is false.
	Limit int64

	// Stored reports whether the key holds a limit: false until the first
	// slot is taken on a new key, or after StateTTL unused.
	Stored bool

	// InUse is the slots held by live leases: len(Holders).
	InUse int64

	// Waiters is the number of callers of Acquire queued for a slot.
	Waiters int64

	// LastDecrease and LastIncrease are when the limit last went down and
	// up; zero when it never did (within StateTTL).
	LastDecrease, LastIncrease time.Time

	// DropDelay is how long the call of the last drop that counted took
	// from its grant to its Dropped, up to 20 windows of the Limiter that
	// reported it: how long an overshoot takes to show. The limit holds
	// for that long after such a drop, and near the limit before it climbs
	// at most one Step per two DropDelays (see Config.Window). 0 when no
	// drop counted (within StateTTL).
	DropDelay time.Duration

	// Latency and NoLoadLatency are the latency estimate that
	// Config.RTTTolerance turns on, as the Limiters of the key keep it
	// (see Config.RTTTolerance): the recent latency, the mean latency
	// from grant to Success of the last Window's successes, to the
	// microsecond; and the no-load latency, the least latency of this
	// period and the last, to the ms (0 for calls under a millisecond).
	// Both are 0 when none is known (within StateTTL), as when no Limiter
	// of the key sets RTTTolerance.
	Latency, NoLoadLatency time.Duration

	// Holders are the live slots, earliest deadline first.
	Holders []Holder
}

// A Holder is one live slot.
type Holder struct {
	ID        string    // the Slot's ID
	ExpiresAt time.Time // when its lease lapses unless it is freed first
}

// Inspect reads the shared limit, the live slots and the number of
// waiters, at one moment; it writes nothing. After an error matching
// ErrOutcomeUnknown, call it again.
func (l *Limiter) Inspect(ctx context.Context) (Info, error) {
	if err := l.check(ctx, "Inspect"); err != nil {
		return Info{}, err
	}
	info, err := l.inspect(ctx)
	return info, errs.Call(ctx, "Inspect", l.base.Key, err)
}
