package lock

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/slotlimit/slotlimit/internal/keepalive"
	"github.com/slotlimit/slotlimit/internal/observe"
	"github.com/slotlimit/slotlimit/internal/script"
)

// cleanupTimeout bounds the unlock that follows a failed TryLock or Lock.
const cleanupTimeout = time.Second

// A Lock is the handle of one owner of a Mutex's lock. It refreshes,
// unlocks and keeps itself alive:
//
//	l, err := mutex.Lock(ctx)
//	if err != nil {
//		return err
//	}
//	defer l.Unlock(context.WithoutCancel(ctx))
//	ctx = l.KeepAlive(ctx) // cancelled, with cause ErrNotHeld, if the lock is lost
//	return store.Write(ctx, l.Fence(), data)
//
// A Lock never takes the lock again once it lost it. Its methods are safe
// for concurrent use. A nil or zero *Lock was not made by TryLock or
// Lock: Unlock and Refresh return an error matching ErrInvalidConfig,
// KeepAlive a context cancelled with such a cause, and Lost is closed.
type Lock struct {
	mutex *Mutex
	token string
	fence int64
	keep  *keepalive.Lease

	// deadline is the time, in ms by the server's clock, that the lease
	// lasts at least until, as the server's replies prove it; 0 when
	// unknown. It only grows, until a call finds the lock gone: it is then
	// -1 for good.
	deadline atomic.Int64
}

// newLock returns a handle for a new owner, with a new token, that holds
// nothing yet.
func (m *Mutex) newLock() *Lock {
	l := &Lock{mutex: m, token: m.newToken()}
	l.keep = keepalive.New(keepalive.Config{
		TTL:     m.cfg.TTL,
		Renew:   l.refresh,
		Release: l.unlock,
		ErrLost: ErrNotHeld,
		OnLost: func(ctx context.Context) {
			observe.Lost(ctx, m.base.Observer, "lock", m.base.Key, l.token, ErrNotHeld)
		},
	})
	return l
}

// begin starts observing a call on l.
func (l *Lock) begin(op string) observe.Call {
	return l.mutex.base.Begin(op, l.mutex.base.Key, l.token, 1, 1)
}

// taken records that the lock was taken, with fence, by a call sent at
// start, and that its lease lasts at least until deadline (ms, the
// server's clock; 0: unknown).
func (l *Lock) taken(start time.Time, fence, deadline int64) {
	l.fence = fence
	l.extended(deadline)
	l.keep.Taken(start)
}

// extended records that the lease lasts at least until deadline.
func (l *Lock) extended(deadline int64) {
	for {
		old := l.deadline.Load()
		if old < 0 || deadline <= old || l.deadline.CompareAndSwap(old, deadline) {
			return
		}
	}
}

// gone records that a call found the lock no longer held by l, so that
// no later call takes a lock found gone for one this owner freed.
func (l *Lock) gone() {
	l.deadline.Store(-1)
}

// Token returns the owner token stored in Redis while this Lock holds the
// lock: 26 characters of base32, the first 10 its Mutex's handle ID (see
// Config.Owner) and the other 16 (80 bits) random, the token's own; "" for
// a nil Lock. While a Lock of this package waits for the lock, the key holds
// the token followed by '+'; Inspect reports the token without it.
func (l *Lock) Token() string {
	if l == nil {
		return ""
	}
	return l.token
}

// Fence returns the lock's fencing token: the Redis server's clock, in
// microseconds, when this owner took the lock; 0 for a nil Lock. Fences
// strictly increase across the successive owners of one key, across a
// lapse and a restart, unless the server's clock steps back by more than
// the time between two owners (an NTP step, or a failover to a replica
// whose clock is behind). Storage that keeps the highest fence it has
// seen can refuse the write of an owner that lost the lock without
// knowing it.
func (l *Lock) Fence() int64 {
	if l == nil {
		return 0
	}
	return l.fence
}

// Refresh extends the lock's lease to TTL from now. It returns an error
// matching ErrNotHeld, and the Lock is then lost, when this owner no
// longer holds the lock: a lock that lapsed is never taken again. A
// Refresh sent again, by go-redis or by its caller after an error
// matching ErrOutcomeUnknown, answers as the first run would have.
func (l *Lock) Refresh(ctx context.Context) error {
	return l.end(ctx, "Refresh", (*keepalive.Lease).Renew)
}

// Unlock frees the lock, or hands it to the first waiter, and stops
// KeepAlive. It returns nil when the lock was freed before the lease
// deadline this owner learnt from the server: by this call, by an earlier
// run of it whose reply was lost, or by an operator's Break. It returns an
// error matching ErrNotHeld, and frees nothing, when the lock was
// unlocked already, when a Refresh found it gone, or when this call finds
// it gone after that deadline (a Lock whose TryLock was sent again does
// not know its deadline until its first Refresh, and counts as past it).
// After an error matching ErrOutcomeUnknown, call Unlock again: it answers
// as the first run did, unless the deadline passed in between.
func (l *Lock) Unlock(ctx context.Context) error {
	return l.end(ctx, "Unlock", (*keepalive.Lease).Release)
}

// end runs method, the Renew or Release of l's lease, and returns its
// error, or ErrNotHeld when l no longer held the lock.
func (l *Lock) end(ctx context.Context, method string, op func(*keepalive.Lease, context.Context) (bool, error)) error {
	if err := l.check(ctx, method); err != nil {
		return err
	}
	held, err := op(l.keep, ctx)
	switch {
	case err != nil:
		return err
	case !held:
		return errs.Op(method, l.mutex.base.Key, ErrNotHeld)
	}
	return nil
}

// check returns the error of a call of method with ctx on l, or nil when
// it may go on (see kernel.Errors.Check).
func (l *Lock) check(ctx context.Context, method string) error {
	if l == nil || l.keep == nil {
		return errs.Check(ctx, false, method, "")
	}
	return errs.Check(ctx, true, method, l.mutex.base.Key)
}

// KeepAlive refreshes the lock about every third of its TTL, in the
// background, until it is unlocked or lost or ctx ends, and returns a
// context derived from ctx that is cancelled when the lock is lost (with
// cause ErrNotHeld) or unlocked. Refreshes that keep failing until the
// lease must have lapsed lose the lock. Calling it again returns the same
// context. A nil ctx, or a Lock not made by TryLock or Lock, gives a
// context cancelled with the cause Unlock would return.
func (l *Lock) KeepAlive(ctx context.Context) context.Context {
	if err := l.check(ctx, "KeepAlive"); err != nil {
		if ctx == nil {
			ctx = context.Background()
		}
		return keepalive.Cancelled(ctx, err)
	}
	return l.keep.KeepAlive(ctx)
}

// Lost returns a channel that is closed when the lock is found lost: a
// refresh found it gone, or refreshes kept failing until it must have
// lapsed. It is never closed for a lock that was unlocked. For a nil or
// zero Lock it is closed.
func (l *Lock) Lost() <-chan struct{} {
	if l == nil || l.keep == nil {
		return (*keepalive.Lease)(nil).Lost() // closed
	}
	return l.keep.Lost()
}

// refresh runs refresh.lua: Config.Renew of the Lock's keepalive.Lease.
func (l *Lock) refresh(ctx context.Context) (bool, error) {
	m := l.mutex
	c := l.begin("Refresh")
	deadline, err := m.refreshRun(ctx, l.token)
	if err != nil {
		err = errs.Call(ctx, "Refresh", m.base.Key, err)
		c.Failed(ctx, err)
		return false, err
	}
	if deadline > 0 {
		l.extended(deadline)
	} else {
		l.gone()
	}
	c.Renewed(ctx, deadline > 0)
	return deadline > 0, nil
}

// unlock runs unlock.lua, and hand_off.lua when someone waits: the
// Config.Release of the Lock's keepalive.Lease. The owner holds the lock
// until the script that frees or hands it over runs, so nobody can take
// it between the two calls.
func (l *Lock) unlock(ctx context.Context) (bool, error) {
	m := l.mutex
	c := l.begin("Unlock")
	held, err := m.unlockRun(ctx, &m.base.Runner, l.token, l.deadline.Load())
	return m.released(ctx, &c, "Unlock", held, err)
}

// released ends c, the report of a call of method that frees the lock,
// with its outcome: held, whether the owner held the lock, or err, which
// it returns named.
func (m *Mutex) released(ctx context.Context, c *observe.Call, method string, held bool, err error) (bool, error) {
	if err != nil {
		err = errs.Call(ctx, method, m.base.Key, err)
		c.Failed(ctx, err)
		return false, err
	}
	c.Released(ctx, held)
	return held, nil
}

// unlockDetached unlocks after a TryLock failed with an unknown outcome:
// it runs even when ctx is done, bounded by cleanupTimeout, and sends no
// WAIT, which could only delay it.
func (l *Lock) unlockDetached(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	noWait := script.Runner{Client: l.mutex.base.Client}
	l.mutex.unlockRun(ctx, &noWait, l.token, 0) //nolint:errcheck // best effort; the lock lapses by itself
}
