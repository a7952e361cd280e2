package adaptive

import (
	"fmt"
	"math"
	"time"

	"github.com/slotlimit/slotlimit/observe"
)

// The defaults of Config's fields, and the bounds New holds them to.
const (
	// DefaultTTL is the lease of a slot when Config.TTL is 0.
	DefaultTTL = 30 * time.Second
	// MaxTTL is the longest Config.TTL.
	MaxTTL = 24 * time.Hour

	// DefaultWindow is Config.Window when it is 0: the limit moves at
	// most once per 50 ms, so it climbs by up to 20 slots a second, and
	// falls from 20 to 8 in about half a second when calls fail within
	// 50 ms.
	DefaultWindow = 50 * time.Millisecond
	// DefaultStep is Config.Step when it is 0.
	DefaultStep = 1
	// DefaultFactor is Config.Factor when it is 0.
	DefaultFactor = 0.9

	// MaxRTTTolerance is the highest Config.RTTTolerance: the scripts
	// compare latencies in whole numbers, exact below 2^53, and a
	// tolerance that high is no signal.
	MaxRTTTolerance = 100
	// LatencyPeriod is how many windows one period of the no-load
	// latency lasts: it is the least latency seen in the current period
	// and the one before (see Config.RTTTolerance).
	LatencyPeriod = 100
)

// StateTTL is how long a limit is kept after the last release on its key:
// a key unused for that long starts again from Config.Initial.
const StateTTL = 24 * time.Hour

// Config describes one shared adaptive limit. Every Limiter given the same
// Key shares one limit and one set of slots, so give them all the same
// Config.
type Config struct {
	// Key names the shared limit. Its data lives in keys beside it, in
	// its Redis Cluster hash slot ("{Key}/adaptive" and others), none at
	// Key itself. A Key that a package of this module keeps beside
	// another key, such as "{k}/recent" or "{k}/adaptive", is refused.
	Key string

	// Min is the lowest the limit goes: at least 1, so that a call can
	// always be tried and a recovery seen. 0 means 1.
	Min int64

	// Max is the highest the limit goes, at least Min and below 2^26. It
	// is required: the most the system behind the limit could ever take,
	// or the most callers there are.
	Max int64

	// Initial is the limit when the key is new (or was unused for
	// StateTTL), Min <= Initial <= Max; 0 means Min. The first Limiter to
	// take a slot on a new key writes it, and every other then follows
	// the shared value.
	Initial int64

	// TTL is a slot's lease: a slot neither freed nor released within TTL
	// of its grant, by the server's clock, lapses and comes back, so that
	// a crashed caller's slot is not lost. It is kept to the millisecond,
	// at least a millisecond and at most MaxTTL; 0 means DefaultTTL. Set
	// it well above the longest call: a slot freed after its lease lapsed
	// counts nothing (Success and the others return ErrNotHeld).
	TTL time.Duration

	// Window is the shortest time between two moves of the limit, by the
	// server's clock, to the millisecond; 0 means DefaultWindow. A burst
	// of drops inside one window (one overload seen by many calls) lowers
	// the limit once, and the drops of calls that were granted before the
	// last decrease count nothing, whenever they report. Successes raise
	// the limit at most once per window too, and not within 5 windows of
	// a decrease, so that a limit just cut to the capacity does not climb
	// back past it at once. The limit thus climbs Step slots per Window at
	// most. Drops teach the limit how long an overshoot takes to show
	// (Info.DropDelay, up to 20 windows: 1 s with the default Window): it
	// holds for that long after a drop that counts, and near the limit
	// before that drop, it climbs one Step per two drop delays (at least a
	// Window), so that each step's overshoot shows before the next; Window
	// needs no tuning for calls refused within a second.
	Window time.Duration

	// Step is the slots a success adds to the limit while the limit was
	// nearly in use (at most a tenth of it, or one slot, free, or a caller
	// waiting) and it may grow (see Window); 0 means DefaultStep.
	Step int64

	// Factor multiplies the limit on a drop that counts: the limit
	// becomes max(Min, min(limit-1, floor(limit*Factor))). It must be in
	// (0, 1); 0 means DefaultFactor.
	Factor float64

	// RTTTolerance, when set, makes the limit read latency as well as
	// drops. 0, the default, leaves drops alone to lower the limit. At 1
	// or above (to the thousandth, at most MaxRTTTolerance), each Success
	// also reports its call's latency, from the slot's grant to its
	// Success on the server's clock, to the ms, to one estimate that every
	// Limiter of the key shares (Info.Latency and Info.NoLoadLatency):
	//   - the recent latency, the mean of the latencies of one Window's
	//     successes, of calls granted since the last decrease;
	//   - the no-load latency, the least latency of the current period of
	//     LatencyPeriod windows and of the period before it, so that a
	//     system that slowed down is learnt within two periods, and one
	//     that sped up at once.
	// At the first Success a Window or more after the last window began,
	// a window's recent latency above RTTTolerance × the no-load latency
	// (taken as at least 1 ms) lowers the limit, as a drop does, and more
	// when the latency shows the system serves fewer calls: to
	// max(Min, floor(limit/2), min(limit-1, floor(limit×Factor),
	// floor(limit × no-load / recent))), so that the calls granted next
	// meet no queue and show the no-load latency. It does so not within 5
	// Windows of a decrease, while the latency of the calls granted before
	// it still shows. While the recent latency is above the tolerance,
	// successes do not raise the limit. A queueing
	// system (a database, a service behind a load balancer) thus keeps
	// its calls near its no-load latency, before any of them times out.
	// A drop still lowers the limit, and a latency above 2^20 ms (about
	// 17 minutes) counts as 2^20 ms. Give every Limiter of a key the same
	// RTTTolerance.
	RTTTolerance float64

	// Replicas, when above 0, makes every write to the limit wait, at
	// the cost of a round trip, until that many replicas acknowledge it
	// (Redis WAIT), so that a slot's lease survives a failover to one of
	// them: a write not acknowledged within ReplicaTimeout fails with
	// ErrNotReplicated, and one whose WAIT a failover cut short with
	// ErrOutcomeUnknown. 0, the default, leaves replication asynchronous,
	// as Redis's is: a forced takeover (not an operator's CLUSTER
	// FAILOVER) can lose the slots taken, and the releases made, just
	// before it; such a slot is held until its lease lapses.
	Replicas int

	// ReplicaTimeout bounds the wait for Replicas, to the millisecond; 0
	// means one second.
	ReplicaTimeout time.Duration

	// Observer, if set, is told of each call's outcome as one final
	// event of package "adaptive": Acquired or Refused for TryAcquire and
	// Acquire (Units 1, Limit the shared limit, InUse the slots in use),
	// Released for Success, Dropped and Ignore (their Op; Held reports
	// whether the slot was live), or Error with the call's error. Before
	// a release's final event, LimitChanged reports a limit the release
	// moved (Units the limit before, Limit the new one, InUse the slots in
	// use after); before an Acquire's, Waited and HandedOver report its
	// wait. With RTTTolerance set, a release's LimitChanged and Released
	// carry the latency estimate after it (Latency, NoLoadLatency). Reads
	// (Limit, Inspect) and calls refused before anything is sent report
	// nothing. nil, the default, costs nothing.
	Observer observe.Observer

	// DisableCoalescing sends each call to Redis as its own script call.
	// By default, concurrent calls of one kind made through the same
	// Limiter (the tries of TryAcquire and Acquire; the releases of
	// Success, Dropped and Ignore) share one script call; each caller gets
	// its own result, error and Observer event, as it would alone.
	DisableCoalescing bool
}

// check validates the fields of c that New's kernel does not, and fills
// in their defaults.
func (c Config) check() (Config, error) {
	if err := errs.Duration("TTL", c.TTL, MaxTTL); err != nil {
		return c, err
	}
	if err := errs.Duration("Window", c.Window, MaxTTL); err != nil {
		return c, err
	}
	switch {
	case c.Min < 0:
		return c, errs.Config("Min is %d, must be at least 1", c.Min)
	case c.Max <= 0:
		return c, errs.Config("Max is %d, must be at least Min", c.Max)
	case c.Initial < 0:
		return c, errs.Config("Initial is %d, must be between Min and Max", c.Initial)
	case c.Step < 0:
		return c, errs.Config("Step is %d, must not be negative", c.Step)
	case math.IsNaN(c.Factor) || c.Factor < 0 || c.Factor >= 1:
		return c, errs.Config("Factor is %v, must be in (0, 1)", c.Factor)
	case math.IsNaN(c.RTTTolerance) || c.RTTTolerance != 0 && (c.RTTTolerance < 1 || c.RTTTolerance > MaxRTTTolerance):
		return c, errs.Config("RTTTolerance is %v, must be 0 (off) or between 1 and %d", c.RTTTolerance, MaxRTTTolerance)
	}
	if c.Min == 0 {
		c.Min = 1
	}
	if c.Initial == 0 {
		c.Initial = c.Min
	}
	switch {
	case c.Max < c.Min:
		return c, errs.Config("Max is %d, must be at least Min, %d", c.Max, c.Min)
	case c.Max >= handedBase:
		// A hand-off's notice packs the limit and the slots in use in one
		// Lua number, exact to 2^53; a limit that high is no limit.
		return c, errs.Config("Max is %d, must be below 2^26", c.Max)
	case c.Initial < c.Min || c.Initial > c.Max:
		return c, errs.Config("Initial is %d, must be between Min (%d) and Max (%d)", c.Initial, c.Min, c.Max)
	case c.Step > c.Max:
		return c, errs.Config("Step is %d, must be at most Max, %d", c.Step, c.Max)
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.Step == 0 {
		c.Step = DefaultStep
	}
	if c.Factor == 0 {
		c.Factor = DefaultFactor
	}
	return c, nil
}

// String describes the limit, e.g.
// `"payments" adaptive limit 1..60 (from 20), +1 or ×0.9 per 50ms, 30s leases`,
// followed by `, latency up to 2× no-load` when RTTTolerance is set.
func (c Config) String() string {
	s := fmt.Sprintf("%q adaptive limit %d..%d (from %d), +%d or ×%g per %v, %v leases",
		c.Key, c.Min, c.Max, c.Initial, c.Step, c.Factor, c.Window, c.TTL)
	if c.RTTTolerance != 0 {
		s += fmt.Sprintf(", latency up to %g× no-load", c.RTTTolerance)
	}
	return s
}
