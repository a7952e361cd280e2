package lock

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
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
// A Lock never takes the lock again once it lost it. A nil *Lock holds
// nothing: Unlock and Refresh return ErrNotHeld, Lost is closed, and
// KeepAlive returns a cancelled context. Its methods are safe for
// concurrent use. A zero Lock behaves as a nil one.
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
	l := &Lock{mutex: m, token: newToken()}
	l.keep = keepalive.New(keepalive.Config{
		TTL:     m.cfg.TTL,
		Renew:   l.refresh,
		Release: l.unlock,
		ErrLost: ErrNotHeld,
		OnLost: func(ctx context.Context) {
			observe.Lost(ctx, m.cfg.Observer, "lock", m.cfg.Key, l.token, ErrNotHeld)
		},
	})
	return l
}

// begin starts observing a call on l.
func (l *Lock) begin(op string) observe.Call {
	m := l.mutex
	return observe.Begin(m.cfg.Observer, "lock", op, m.cfg.Key, l.token, 1, 1)
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
// lock: 128 random bits, as text (26 characters of base32). Once a Lock
// of this package waits for the lock, the key holds the token followed by
// '+', the mark that tells Unlock to look for waiters; Inspect reports the
// token without it.
func (l *Lock) Token() string {
	if l == nil {
		return ""
	}
	return l.token
}

// Fence returns the lock's fencing token: the Redis server's clock, in
// microseconds, when this owner took the lock (read in the same
// transaction or script that took it; when go-redis sent that call again
// after its reply was lost, read by the call sent again, which found the
// lock held by this owner: a little later than it was taken, still before
// any later owner took it). Storage that keeps the highest
// fence it has seen can refuse a write that carries a lower one, from an
// owner that lost the lock without knowing it (a long pause, say).
//
// Fences strictly increase across the successive owners of one key, across
// a lapse and across a restart: each owner takes the lock only after the
// last one unlocked it, a round trip after it took it, or after its lease
// lapsed, so later by the server's clock. The promise fails only if that
// clock steps back by more than the time between two owners (an NTP step,
// or a failover to a replica whose clock is behind). No key is kept for
// it. It is 0 for a nil Lock.
func (l *Lock) Fence() int64 {
	if l == nil {
		return 0
	}
	return l.fence
}

// Refresh extends the lock's lease to TTL from now. It returns an error
// matching ErrNotHeld when the lock is no longer held by this owner (and
// the Lock is then lost); it never takes a lapsed lock again. Refresh can
// be sent any number of times: a call that go-redis sends again after its
// reply was lost answers as the first did. After an error matching
// ErrOutcomeUnknown, call Refresh again: it answers as the first run
// would have.
func (l *Lock) Refresh(ctx context.Context) error {
	if l == nil || l.keep == nil {
		return ErrNotHeld
	}
	if ctx == nil {
		return errNilContext
	}
	ok, err := l.keep.Renew(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return l.notHeld("refresh")
	}
	return nil
}

// Unlock frees the lock and stops KeepAlive; a waiter, if any, gets the
// lock at once. It returns an error matching ErrNotHeld when this owner no
// longer held the lock (it lapsed, or was broken), or when it was unlocked
// already. After an error matching ErrOutcomeUnknown, call Unlock again:
// it answers as the first run would have, within the edges below.
//
// An Unlock whose first run freed the lock, or handed it on, and that
// runs again (go-redis sends a call again when its reply was lost, and a
// caller calls Unlock again after an error) reports success: the lock's
// lease, whose deadline this owner learnt from the server when it took or
// last refreshed the lock, had not run out, so nothing but this owner's
// unlock can have freed it. Past that deadline, it reports ErrNotHeld; so
// does a first run just before the deadline sent again just after it,
// and one of a Lock that does not know its deadline: a Lock whose TryLock
// was sent again, until its first Refresh. A lock broken by an operator
// (Break, or a DEL) before its deadline is reported unlocked, not
// ErrNotHeld, unless a Refresh found it gone first.
func (l *Lock) Unlock(ctx context.Context) error {
	if l == nil || l.keep == nil {
		return ErrNotHeld
	}
	if ctx == nil {
		return errNilContext
	}
	ok, err := l.keep.Release(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return l.notHeld("unlock")
	}
	return nil
}

// KeepAlive refreshes the lock about every third of its TTL, in the
// background, until it is unlocked or lost or ctx ends, and returns a
// context for the work, derived from ctx, that is cancelled when the lock
// is lost (with cause ErrNotHeld) or unlocked. A failed refresh is retried
// sooner; if refreshes keep failing past the point where the lease must
// have lapsed, the lock is lost. Calling KeepAlive again returns the same
// context. On a nil Lock it returns a context cancelled with cause
// ErrNotHeld, and given a nil ctx, one cancelled with cause
// ErrInvalidArgument.
func (l *Lock) KeepAlive(ctx context.Context) context.Context {
	if ctx == nil {
		return keepalive.Cancelled(context.Background(), errNilContext)
	}
	if l == nil || l.keep == nil {
		return keepalive.Cancelled(ctx, ErrNotHeld)
	}
	return l.keep.KeepAlive(ctx)
}

// Lost returns a channel that is closed when the lock is found lost: a
// refresh found it gone, or refreshes kept failing until it must have
// lapsed. It is never closed for a lock that was unlocked. For a nil Lock
// it is closed.
func (l *Lock) Lost() <-chan struct{} {
	if l == nil || l.keep == nil {
		return (*keepalive.Lease)(nil).Lost() // closed
	}
	return l.keep.Lost()
}

// notHeld is the ErrNotHeld of operation op.
func (l *Lock) notHeld(op string) error {
	return callerr.Op("lock", op, l.mutex.cfg.Key, ErrNotHeld)
}

// refresh runs refresh.lua: Config.Renew of the Lock's keepalive.Lease.
func (l *Lock) refresh(ctx context.Context) (bool, error) {
	m := l.mutex
	c := l.begin("Refresh")
	deadline, err := m.refreshRun(ctx, l.token)
	if err != nil {
		err = callerr.Call(ctx, "lock", "refresh", m.cfg.Key, err)
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
	held, err := m.unlockRun(ctx, &m.runner, l.token, l.deadline.Load())
	if err != nil {
		err = callerr.Call(ctx, "lock", "unlock", m.cfg.Key, err)
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
	noWait := script.Runner{Client: l.mutex.client}
	l.mutex.unlockRun(ctx, &noWait, l.token, 0) //nolint:errcheck // best effort; the lock lapses by itself
}
