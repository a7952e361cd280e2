package adaptive

import (
	"context"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
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

	// DropDelay is how long the call whose drop last lowered the limit
	// took from its grant to its Dropped, up to 20 windows: how long an
	// overshoot takes to show. The limit holds for that long after a
	// decrease, and climbs at most one Step per two DropDelays while it
	// is below the limit that decrease lowered plus a Step (see
	// Config.Window). 0 when no drop lowered the limit (within StateTTL).
	DropDelay time.Duration

	// Holders are the live slots, earliest deadline first.
	Holders []Holder
}

// A Holder is one live slot.
type Holder struct {
	ID        string    // the Slot's ID
	ExpiresAt time.Time // when its lease lapses unless it is freed first
}

// Inspect reads the shared limit, the live slots and the number of
// waiters at one moment, in one script that writes nothing. After an
// error matching ErrOutcomeUnknown, call it again.
func (l *Limiter) Inspect(ctx context.Context) (Info, error) {
	if err := l.usable(ctx); err != nil {
		return Info{}, err
	}
	info, err := l.inspect(ctx)
	if err != nil {
		return Info{}, callerr.Call(ctx, "adaptive", "inspect", l.cfg.Key, err)
	}
	return info, nil
}
