package slotlimit

import (
	"context"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/notice"
	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// A Limiter lets at most Limit holders at once into a guarded section,
// across every process that shares its Redis key.
//
// Each holder, such as a device ID, holds at most one lease, which lapses
// TTL after it was taken or last renewed. A holder that crashes without
// releasing costs its own slot until its lease lapses, and no longer; the
// other leases are untouched. Every check-and-take, release and renewal is
// one Lua script, so the limit holds under any interleaving of callers, and
// every deadline is read from the Redis server's clock, so callers with
// skewed clocks agree on when a lease lapses.
//
// Most callers want TryAcquire on an event (a device report) and Release
// when the work is done, or Acquire to wait for a slot. AcquireLease suits
// in-process work: it names the holder itself and returns a Lease that can
// keep itself alive. A lease can weigh more than one unit (TryAcquireN,
// AcquireN), for work that counts as several holders.
//
// Waiters do not poll. A caller that must wait joins a queue in Redis, and
// a release hands the units it frees straight to the first waiters in it,
// in the same script, so no slot sits idle while a waiter learns that it is
// free. A notice on a pub/sub channel then tells the waiter's process,
// and AcquireN returns as it arrives, with no further round trip; the
// waiter claims the units for their full lease time just behind it, and
// units handed to a waiter that died return within seconds. The waiters of
// one client share one subscription, and a notice wakes only the waiter it
// names. A waiter also looks again when the earliest lease is due to
// lapse, and at least every second to keep its place in the queue, so a
// lost notice delays it at most that long.
//
// The leases live in a sorted set at Config.Key, holder -> deadline, with
// weights and the fair-mode queue in keys beside it in the same Redis
// Cluster hash slot. The keys expire by themselves when their last lease
// lapses. Limiters with different TTLs may share a key, since each lease
// keeps the deadline it was given; a Limiter built with a new Limit on the
// same key applies it from its next call, and a lower limit never evicts a
// holder, it only refuses new ones until the count is below it.
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
}

// New returns a Limiter for cfg. It returns an error matching
// ErrInvalidConfig when client is nil or cfg is invalid; a Key with a '}'
// must hold a hash tag, so that the Limiter's keys share a cluster slot.
// New does not contact Redis.
func New(client redis.UniversalClient, cfg Config) (*Limiter, error) {
	s, err := newSlots(client, cfg, DefaultTTL)
	if err != nil {
		return nil, err
	}
	aux, channel, ok := keyNames(s.cfg.Key, s.cfg.Limit)
	if !ok {
		return nil, invalidConfig("Key %q has a '}' but no hash tag", s.cfg.Key)
	}
	l := &Limiter{
		slots:      s,
		keys:       append([]string{s.cfg.Key}, aux[:]...),
		channel:    channel,
		notices:    waitqueue.Notices.Site(client),
		channelArg: channel,
		notify:     notice.Command(client),
		fair:       "0",
	}
	if s.cfg.Fair {
		l.fair = "1"
	}
	l.releaseFixed = l.releaseFixedArg()
	l.refused = refusedKey(s.cfg.Key)
	l.acquireKeys, l.queuedKeys = l.leaseKeys(), l.keys
	if s.cfg.CountRefusals {
		l.acquireKeys = append(slices.Clone(l.leaseKeys()), l.refused)
		l.queuedKeys = append(slices.Clone(l.keys), l.refused)
	}
	return l, nil
}

// Config returns the Limiter's configuration, with the default TTL filled
// in; the zero Config for a zero or nil Limiter.
func (l *Limiter) Config() Config {
	if l == nil {
		return Config{}
	}
	return l.cfg
}

// usable returns errUnusable for a zero or nil Limiter, which has no
// client to call, and an error matching ErrInvalidArgument for a nil ctx.
func (l *Limiter) usable(ctx context.Context) error {
	if l == nil || l.client == nil {
		return errUnusable
	}
	if ctx == nil {
		return errNilContext
	}
	return nil
}

// TryAcquire takes a slot for holder if one is free, and never waits. It is
// shorthand for TryAcquireN(ctx, holder, 1).
//
// A holder that already holds a slot keeps it: its lease is renewed and no
// second slot is taken. When every slot is taken, TryAcquire returns a
// Result with Acquired false and an EarliestLapse, and RetryAfter says when to come back, and a nil error.
//
// An error from the connection leaves the outcome unknown (the reply may
// have been lost after the script ran). Calling TryAcquire or Release again
// for the same holder is always safe: both are idempotent. Likewise, a call
// whose reply was lost and which the go-redis client sent again (as it
// does by default) takes one slot: its second run finds the holder's own
// lease, renews it, and answers granted as the first did.
func (l *Limiter) TryAcquire(ctx context.Context, holder string) (Result, error) {
	return l.TryAcquireN(ctx, holder, 1)
}

// TryAcquireN takes n units for holder if they are free, and never waits.
// Count and Limit are in units; a holder of n units counts as n holders.
//
// A holder has one lease of one weight. Asking again with the same n renews
// it. Asking with another n re-weighs it: a smaller n always succeeds and
// frees the difference, and a larger n succeeds if the difference is free;
// if not, the call is refused and the holder keeps its lease and weight as
// they were, which Result.Weight reports. n must be between 1 and Limit,
// or TryAcquireN returns an error matching ErrInvalidWeight.
func (l *Limiter) TryAcquireN(ctx context.Context, holder string, n int64) (Result, error) {
	if err := l.check(ctx, holder, n); err != nil {
		return Result{Limit: l.Config().Limit}, err
	}
	c := l.begin("TryAcquire", holder, n)
	res, _, err := l.try(ctx, holder, n, false)
	observeResult(ctx, &c, res, err)
	return res, err
}

func (l *Limiter) check(ctx context.Context, holder string, n int64) error {
	if err := l.usable(ctx); err != nil {
		return err
	}
	if err := checkHolder(holder); err != nil {
		return err
	}
	return checkWeight(n, l.cfg.Limit)
}

// try runs the acquire script once; queue says whether a refused caller
// joins the queue. Its waitqueue.Try names the caller's queue entry (0:
// none) and, when it joins, the server's clock as the script ran.
func (l *Limiter) try(ctx context.Context, holder string, n int64, queue bool) (Result, waitqueue.Try, error) {
	call := l.acquireCall(n, queue, holder)
	reply, err := l.runner.Run(ctx, call.script, call.keys, call.args...).Result()
	if err != nil {
		return Result{Limit: l.cfg.Limit}, waitqueue.Try{}, callError(ctx, "acquire", l.cfg.Key, err)
	}
	var res [1]Result
	results, try, err := l.decodeAcquire(res[:0], reply, call, 1)
	if err != nil {
		return Result{Limit: l.cfg.Limit}, waitqueue.Try{}, opError("acquire", l.cfg.Key, err)
	}
	return results[0], try, nil
}

// Acquire takes a slot for holder, waiting until one is free or ctx is
// done. It is shorthand for AcquireN(ctx, holder, 1).
func (l *Limiter) Acquire(ctx context.Context, holder string) (Result, error) {
	return l.AcquireN(ctx, holder, 1)
}

// AcquireN takes n units for holder, waiting until they are free or ctx is
// done. A holder that already holds them gets its lease back at once,
// renewed; see TryAcquireN for re-weighing.
//
// If ctx is done first, AcquireN returns an error that matches ctx.Err()
// and holder holds nothing: a ctx that is done on entry sends nothing to
// Redis, and if ctx ends while a call is in flight, so that its outcome is
// unknown, AcquireN releases holder before it returns. Any other error is
// returned as it is, and when it leaves the outcome unknown (a broken
// connection, say) holder is released too, so a failed AcquireN leaves no
// phantom slot behind while Redis answers. That release may take AcquireN
// up to a second past ctx's end, and it also frees a lease holder held
// before the call: after a failed AcquireN, holder holds nothing.
//
// Units a release hands over are held for the waiter for the 3-second
// claim time, or its lease time if shorter, from the release, by the
// server's clock. AcquireN returns them the moment the release's notice
// arrives, with ExpiresAt the full lease time from the release, if they
// must still be held for it with time for the claim to arrive; the claim
// that holds them to that deadline follows at once, off the caller's path.
// A waiter that reads the notice later (its process was stopped or
// starved) tries again instead, and returns only once that try holds the
// units, so it never returns with units whose hand-off lapsed and another
// holder took. In the one case where the claim behind the return cannot
// reach Redis in time, the lease lapses then, before ExpiresAt;
// AcquireLease marks such a lease lost, so that KeepAlive's context ends.
// With Config.Replicas set, the claim is made, and acknowledged, first;
// if that took so long that the units may have lapsed meanwhile (the
// process was stopped, or the replicas were slow), AcquireN tries again
// instead, as it does after a try whose reply came a lease time or more
// after it was sent. No claim is sent for a hand-off that AcquireN does
// not return with.
func (l *Limiter) AcquireN(ctx context.Context, holder string, n int64) (Result, error) {
	return l.acquireN(ctx, holder, n, nil)
}

// acquireN is AcquireN; x is as for wait.
func (l *Limiter) acquireN(ctx context.Context, holder string, n int64, x *Lease) (Result, error) {
	if err := l.check(ctx, holder, n); err != nil {
		return Result{Limit: l.Config().Limit}, err
	}
	c := l.begin("Acquire", holder, n)
	if err := ctx.Err(); err != nil {
		err = callError(ctx, "acquire", l.cfg.Key, err)
		c.Failed(ctx, err)
		return Result{Limit: l.cfg.Limit}, err
	}
	res, err := l.wait(ctx, holder, n, x, &c)
	res, err = acquireOutcome(ctx, l.cfg, res, err)
	observeResult(ctx, &c, res, err)
	return res, err
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
	noWait := script.Runner{Client: l.client}
	noWait.Run(ctx, releaseScript, l.keys, l.releaseArgs(holder)...) //nolint:errcheck // best effort; the lease lapses by itself
}

// Release frees holder's slot, all units of it, and takes holder out of
// the fair-mode queue. It returns nil when holder held a live lease, and
// an error matching ErrNotHeld when it did not (a lease never taken,
// already released or already lapsed); nothing else is touched.
//
// A release frees a lease once however often it is sent, and hands its
// units on once. But a Release whose reply was lost after it ran, and
// which the go-redis client therefore sent again (as it does by default),
// returns ErrNotHeld: its second run finds nothing to free. A caller that
// needs the exact answer holds a Lease, whose Release knows the lease's
// deadline and answers as the first run did. An error matching
// ErrOutcomeUnknown leaves it open whether the lease was freed: call
// Release again with the same holder, and read ErrNotHeld then as "freed".
func (l *Limiter) Release(ctx context.Context, holder string) error {
	return l.release(ctx, holder, 0)
}

// release is Release for a caller that knows, from the server's replies,
// the lease's deadline on the server's clock (ms; 0 when it does not): a
// lease gone before then was freed by this call's first run.
func (l *Limiter) release(ctx context.Context, holder string, deadline int64) error {
	if err := l.usable(ctx); err != nil {
		return err
	}
	if err := checkHolder(holder); err != nil {
		return err
	}
	c := l.begin("Release", holder, 0)
	reply, err := l.runner.Run(ctx, releaseScript, l.keys, l.releaseHeldArgs(holder, deadline)...).Result()
	if err != nil {
		err = callError(ctx, "release", l.cfg.Key, err)
		c.Failed(ctx, err)
		return err
	}
	var one [1]bool
	released, err := decodeReleased(one[:0], reply)
	if err != nil || len(released) != 1 {
		err = opError("release", l.cfg.Key, callerr.UnexpectedReply(reply))
		c.Failed(ctx, err)
		return err
	}
	c.Released(ctx, released[0])
	if !released[0] {
		return opError("release", l.cfg.Key, ErrNotHeld)
	}
	return nil
}

// Renew extends holder's lease to TTL from now. It returns an error
// matching ErrNotHeld when holder holds no live lease; it never takes a
// slot that had lapsed. A Renew sent again renews again, to TTL from its
// last run; after an error matching ErrOutcomeUnknown, call Renew again
// with the same holder.
func (l *Limiter) Renew(ctx context.Context, holder string) error {
	_, ok, err := l.renew(ctx, holder)
	if err == nil && !ok {
		err = opError("renew", l.cfg.Key, ErrNotHeld)
	}
	return err
}

// renew is Renew that also returns the new deadline.
func (l *Limiter) renew(ctx context.Context, holder string) (time.Time, bool, error) {
	if err := l.usable(ctx); err != nil {
		return time.Time{}, false, err
	}
	if err := checkHolder(holder); err != nil {
		return time.Time{}, false, err
	}
	c := l.begin("Renew", holder, 0)
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
	if err := l.usable(ctx); err != nil {
		return 0, err
	}
	return l.runCount(ctx)
}

// Refusals returns the count of calls refused without waiting on the
// Limiter's key, by every Limiter on it with Config.CountRefusals set,
// since the count began (it starts again a day after it began); 0 when
// none counts. It reads only, whatever this Limiter's own setting.
func (l *Limiter) Refusals(ctx context.Context) (int64, error) {
	if err := l.usable(ctx); err != nil {
		return 0, err
	}
	n, err := l.client.Get(ctx, l.refused).Int64()
	if err == redis.Nil {
		return 0, nil
	}
	if err != nil {
		return 0, callError(ctx, "refusals", l.cfg.Key, err)
	}
	return n, nil
}

// Holders returns the live leases, earliest deadline first.
func (l *Limiter) Holders(ctx context.Context) ([]Holder, error) {
	if err := l.usable(ctx); err != nil {
		return nil, err
	}
	return l.runHolders(ctx)
}
