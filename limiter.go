package slotlimit

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/coalesce"
	"github.com/slotlimit/slotlimit/internal/notice"
	"github.com/slotlimit/slotlimit/internal/observe"
	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// A Limiter lets at most Limit holders at once into a guarded section,
// across every process that shares its Redis key.
//
// Each holder, such as a device ID, holds at most one lease, which lapses
// TTL after it was taken or last renewed, unless it is released first. A
// holder that crashes without releasing costs its own slot until its
// lease lapses, and no longer. Every deadline is read from the Redis
// server's clock, so callers with skewed clocks agree on when a lease
// lapses. A lease can weigh more than one unit (TryAcquireN, AcquireN),
// for work that counts as several holders; Limit then counts units.
//
// Most callers want TryAcquire on an event (a device report) and Release
// when the work is done, or Acquire to wait for a slot. AcquireLease suits
// in-process work: it names the holder itself and returns a Lease that can
// keep itself alive.
//
// Limiters on one key may differ in TTL, since each lease keeps the
// deadline it was given; a Limiter with a lower Limit never evicts a
// holder, it only refuses new ones until the count is below its limit.
//
// A Limiter is safe for concurrent use.
type Limiter struct {
	slots
	keys    []string     // leases, weights, full marker; queue, queue deadlines, queue wants
	refused string       // the refusal counter (Config.CountRefusals)
	channel string       // the notice channel
	notices *notice.Site // where its waiters join the client's notice hub

	// The keys of acquire.lua and acquire_queued.lua: the lease keys and
	// all keys, each followed by the refusal counter with CountRefusals.
	acquireKeys, queuedKeys []string

	// Script arguments, boxed once: the notice channel, the notice
	// command (publish or spublish), and "1" in fair mode, else "0".
	channelArg, notify, fair any

	// releaseFixed is release.lua's first argument, the arguments that
	// are the same in each of its calls (see releaseFixedArg), boxed once.
	releaseFixed any

	lanes *lanes // the calls it coalesces, or sends alone with Config.DisableCoalescing

	// unsettled are the holders whose try's ctx ended while its batch was
	// in flight: their release waits for the batch (see runRelease).
	unsettled coalesce.Unsettled
}

// New returns a Limiter for cfg. It returns an error matching
// ErrInvalidConfig when client is nil or cfg is invalid (see
// ErrInvalidConfig). New does not contact Redis.
func New(client redis.UniversalClient, cfg Config) (*Limiter, error) {
	s, err := newSlots(client, cfg, DefaultTTL, limiterSides(cfg.Limit)...)
	if err != nil {
		return nil, err
	}
	l := &Limiter{
		slots:      s,
		keys:       s.base.Keys[:numKeys:numKeys],
		channel:    s.base.Keys[keyChannel],
		refused:    s.base.Keys[keyRefused],
		notices:    waitqueue.Notices.Site(client),
		channelArg: s.base.Keys[keyChannel],
		notify:     notice.Command(client),
		fair:       "0",
	}
	if s.cfg.Fair {
		l.fair = "1"
	}
	l.releaseFixed = l.releaseFixedArg()
	// A call's lease lasts TTL; a lease a release hands to a waiter lasts
	// until the waiter claims it, within a queue entry's life, and then TTL.
	l.withRecord(s.base.Keys[keyRecord], url.Values{
		"limit": {strconv.FormatInt(s.cfg.Limit, 10)},
		"lease": {formatMillis(s.cfg.TTL)},
	}, s.cfg.TTL+waitqueue.EntryTTL)
	l.lanes = newLanes(l, s.cfg)
	l.acquireKeys, l.queuedKeys = l.leaseKeys(), l.keys
	if s.cfg.CountRefusals {
		l.acquireKeys = append(slices.Clone(l.leaseKeys()), l.refused)
		l.queuedKeys = append(slices.Clone(l.keys), l.refused)
	}
	return l, nil
}

// Config returns the Limiter's configuration, with the defaults filled
// in; the zero Config for a zero or nil Limiter.
func (l *Limiter) Config() Config {
	if l == nil {
		return Config{}
	}
	return l.cfg
}

// usable returns the error of a call of method made with ctx, or nil
// when the call may go on: a zero or nil Limiter was not made by New.
func (l *Limiter) usable(ctx context.Context, method string) error {
	if l == nil {
		return errs.Check(ctx, false, method, "")
	}
	return l.slots.usable(ctx, method)
}

// TryAcquire takes a slot for holder if one is free, and never waits. It
// is shorthand for TryAcquireN(ctx, holder, 1).
func (l *Limiter) TryAcquire(ctx context.Context, holder string) (Result, error) {
	return l.tryAcquireN(ctx, "TryAcquire", holder, 1)
}

// TryAcquireN takes n units for holder if they are free, and never waits.
// When they are not, it returns a Result with Acquired false, which says
// when to come back (RetryAfter), and a nil error. A holder has one lease
// of one weight: asking again with the same n renews it, and with another
// n re-weighs it, which a refusal leaves as it was (Result.Weight). n must
// be 1 to Limit, or the error matches ErrInvalidWeight. A TryAcquireN
// sent again finds the holder's own lease and renews it: it takes n units
// once (its Count may then include units that calls coalesced with it
// took).
func (l *Limiter) TryAcquireN(ctx context.Context, holder string, n int64) (Result, error) {
	return l.tryAcquireN(ctx, "TryAcquireN", holder, n)
}

// tryAcquireN is TryAcquireN for a call of method, which its errors and
// its report to the Observer name.
func (l *Limiter) tryAcquireN(ctx context.Context, method, holder string, n int64) (Result, error) {
	if err := l.check(ctx, method, holder, n); err != nil {
		return Result{Limit: l.Config().Limit}, err
	}
	c := l.begin(true, method, holder, n)
	a, err := l.tryOnce(ctx, method, holder, tryKey{n: n})
	observeResult(ctx, &c, a.res, err)
	return a.res, err
}

// check returns the error of a call of method with ctx, holder and n, or
// nil when the call may go on.
func (l *Limiter) check(ctx context.Context, method, holder string, n int64) error {
	if err := l.usable(ctx, method); err != nil {
		return err
	}
	if err := checkHolder(holder); err != nil {
		return errs.Op(method, l.cfg.Key, err)
	}
	if err := checkWeight(n, l.cfg.Limit); err != nil {
		return errs.Op(method, l.cfg.Key, err)
	}
	return nil
}

// try runs acquire_queued.lua once, in a batch or alone, for a waiting
// call of method, which joins the queue when refused. Its waitqueue.Try
// names the caller's queue entry and the server's clock as the script
// ran.
func (l *Limiter) try(ctx context.Context, method, holder string, n int64) (Result, waitqueue.Try, error) {
	a, err := l.tryOnce(ctx, method, holder, tryKey{n: n, join: true})
	return a.res, a.try, err
}

// Acquire takes a slot for holder, waiting until one is free or ctx is
// done. It is shorthand for AcquireN(ctx, holder, 1).
func (l *Limiter) Acquire(ctx context.Context, holder string) (Result, error) {
	return l.acquireN(ctx, "Acquire", holder, 1, nil)
}

// AcquireN takes n units for holder, waiting until they are free or ctx
// is done; a holder that holds them already gets its lease back at once,
// renewed (see TryAcquireN for re-weighing). On failure holder holds
// nothing, not even a lease it held before: if ctx ended first, the error
// matches ctx.Err(). A failed AcquireN whose outcome is unknown releases
// holder before it returns, up to a second past ctx's end, so it may be
// called again as it is. In one rare case the lease lapses before
// ExpiresAt (units handed over whose claim could not reach Redis in
// time); a Lease is then marked lost.
func (l *Limiter) AcquireN(ctx context.Context, holder string, n int64) (Result, error) {
	return l.acquireN(ctx, "AcquireN", holder, n, nil)
}

// acquireN is AcquireN for a call of method, which its errors and its
// report to the Observer name. x is as for wait.
func (l *Limiter) acquireN(ctx context.Context, method, holder string, n int64, x *Lease) (Result, error) {
	if err := l.check(ctx, method, holder, n); err != nil {
		return Result{Limit: l.Config().Limit}, err
	}
	c := l.begin(true, method, holder, n)
	if err := ctx.Err(); err != nil {
		err = errs.Call(ctx, method, l.cfg.Key, err)
		c.Failed(ctx, err)
		return Result{Limit: l.cfg.Limit}, err
	}
	res, err := l.wait(ctx, method, holder, n, x, &c)
	res, err = acquireOutcome(ctx, method, l.cfg, res, err)
	observeResult(ctx, &c, res, err)
	return res, err
}

// begin starts the report to the Observer of a call of method by holder,
// of n units, unless reported is false: the Call it then returns reports
// nothing, for the renewals and the release of a Lease of Do, whose one
// report is its acquire's.
func (l *Limiter) begin(reported bool, method, holder string, n int64) observe.Call {
	if !reported {
		return observe.Call{}
	}
	return l.base.Begin(method, l.cfg.Key, holder, n, l.cfg.Limit)
}

// cleanupTimeout bounds the release that follows a failed acquire.
const cleanupTimeout = time.Second

// releaseDetached releases holder after an acquire failed: it runs even
// when ctx is done, bounded by cleanupTimeout.
//
// It sends no WAIT, even with Config.Replicas set: waiting for replicas
// could only delay the release, past cleanupTimeout when they are down.
func (l *Limiter) releaseDetached(ctx context.Context, holder string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	l.leave(ctx, holder)
}

// leave releases holder and takes it out of the queue, handing on what it
// held or was handed, for a caller that failed and holds nothing after:
// the Leave of a wait (see waitqueue.Steps), and releaseDetached. It sends
// no WAIT, which could only delay it.
func (l *Limiter) leave(ctx context.Context, holder string) {
	l.unsettled.Settle(ctx, holder)
	noWait := script.Runner{Client: l.base.Client}
	noWait.Run(ctx, releaseScript, l.keys, l.releaseArgs(holder)...) //nolint:errcheck // best effort; the lease lapses by itself
}

// Release frees holder's lease, all units of it, and takes holder out of
// the queue of waiters. It returns nil when holder held a live lease, and
// an error matching ErrNotHeld when it did not (a lease never taken,
// already released or lapsed); nothing else is touched.
//
// A Release sent again frees the lease once, but its second run finds
// nothing to free and returns ErrNotHeld: after an error matching
// ErrOutcomeUnknown, call Release again and read ErrNotHeld as "freed". A
// Lease's Release answers as its first run did.
func (l *Limiter) Release(ctx context.Context, holder string) error {
	return l.release(ctx, holder, 0, true)
}

// release is Release for a caller that knows, from the server's replies,
// the lease's deadline on the server's clock (ms; 0 when it does not): a
// lease gone before then was freed by this call's first run. reported
// says whether it reports to the Observer (see begin).
func (l *Limiter) release(ctx context.Context, holder string, deadline int64, reported bool) error {
	if err := l.usable(ctx, "Release"); err != nil {
		return err
	}
	if err := checkHolder(holder); err != nil {
		return errs.Op("Release", l.cfg.Key, err)
	}
	c := l.begin(reported, "Release", holder, 0)
	released, err := l.runRelease(ctx, holder, deadline)
	if err != nil {
		c.Failed(ctx, err)
		return err
	}
	c.Released(ctx, released)
	if !released {
		return errs.Op("Release", l.cfg.Key, ErrNotHeld)
	}
	return nil
}

// Renew extends holder's lease to TTL from now. It returns an error
// matching ErrNotHeld when holder holds no live lease, and never takes a
// slot that had lapsed. A Renew sent again renews again, to TTL from its
// last run: after an error matching ErrOutcomeUnknown, call it again.
func (l *Limiter) Renew(ctx context.Context, holder string) error {
	_, ok, err := l.renew(ctx, holder, true)
	if err == nil && !ok {
		err = errs.Op("Renew", l.cfg.Key, ErrNotHeld)
	}
	return err
}

// renew is Renew that also returns the new deadline; reported says
// whether it reports to the Observer (see begin).
func (l *Limiter) renew(ctx context.Context, holder string, reported bool) (time.Time, bool, error) {
	if err := l.usable(ctx, "Renew"); err != nil {
		return time.Time{}, false, err
	}
	if err := checkHolder(holder); err != nil {
		return time.Time{}, false, errs.Op("Renew", l.cfg.Key, err)
	}
	c := l.begin(reported, "Renew", holder, 0)
	deadline, held, err := l.runRenew(ctx, holder)
	if err != nil {
		c.Failed(ctx, err)
		return time.Time{}, false, err
	}
	c.Renewed(ctx, held)
	if !held {
		return time.Time{}, false, nil
	}
	return time.UnixMilli(deadline), true, nil
}

// Count returns the units held by live leases: the number of holders, when
// every lease weighs one unit.
func (l *Limiter) Count(ctx context.Context) (int64, error) {
	if err := l.usable(ctx, "Count"); err != nil {
		return 0, err
	}
	return l.runCount(ctx)
}

// Refusals returns the count of calls refused without waiting on the
// Limiter's key, by every Limiter on it with Config.CountRefusals set,
// since the count began (it starts again a day after it began); 0 when
// none counts. It reads only, whatever this Limiter's own setting.
func (l *Limiter) Refusals(ctx context.Context) (int64, error) {
	if err := l.usable(ctx, "Refusals"); err != nil {
		return 0, err
	}
	n, err := l.base.Client.Get(ctx, l.refused).Int64()
	if err == redis.Nil {
		return 0, nil
	}
	if err != nil {
		return 0, errs.Call(ctx, "Refusals", l.cfg.Key, err)
	}
	return n, nil
}

// Holders returns the live leases, earliest deadline first.
func (l *Limiter) Holders(ctx context.Context) ([]Holder, error) {
	if err := l.usable(ctx, "Holders"); err != nil {
		return nil, err
	}
	return l.runHolders(ctx)
}
