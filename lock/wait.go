package lock

import (
	"context"
	"time"

	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// Lock takes the lock, waiting until it is free or ctx is done. It does
// not poll. A refused try joins a queue in Redis, and the owner's Unlock
// hands the lock straight to the first waiter in it, in the same script,
// and wakes that waiter alone through a notice; Lock then returns at once,
// with no further round trip, and claims the lock for its full TTL just
// behind the return. A lock that lapses instead (its owner died) wakes the
// waiters when it lapses; an owner that takes it by TryLock before their
// tries come is found by those tries, which mark its token so that its
// Unlock hands the lock on (see Lock.Token), or find it free if it was
// unlocked meanwhile. A waiter also tries again every second, to keep its
// place in the queue, so a lost notice delays it at most that long.
//
// A handed lock is held for the waiter only for the claim time (3
// seconds), or its TTL if shorter, from the hand-off, by the server's
// clock. Lock returns on the notice only while the lock must still be held
// for it, with time for the claim to arrive; a waiter that reads the
// notice later (its process was stopped or starved) tries again instead,
// and returns only once that try holds the lock.
//
// If ctx is done first, Lock returns an error that matches ctx.Err(),
// holds nothing and has left the queue: an Unlock never hands the lock to
// a Lock that gave up, and a lock handed to it as it gave up is handed on
// to the next waiter. Any other error is returned as it is; when it leaves
// the outcome unknown (a broken connection, say), it matches
// ErrOutcomeUnknown, and Lock unlocks what it may have taken before it
// returns, so a failed Lock holds nothing: call it again. A try that
// go-redis sends again after its reply was lost finds what its first run
// did: the lock taken by the Lock's own token, or the same place in the
// queue.
//
// In the one case where the claim behind the return cannot reach Redis
// in time, the lock lapses then; the Lock is then marked lost, so that
// KeepAlive's context ends. With Config.Replicas set, the claim is made,
// and acknowledged, before Lock returns; if that took so long that the
// lock may have lapsed meanwhile (its process was stopped, or the
// replicas were slow), Lock tries again instead, as it does after a try
// whose reply came a TTL or more after it was sent. No claim is sent for
// a hand-off that Lock does not return with.
func (m *Mutex) Lock(ctx context.Context) (*Lock, error) {
	if err := m.check(ctx, "Lock"); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, errs.Op("Lock", m.base.Key, err) // nothing was sent
	}
	l := m.newLock()
	c := l.begin("Lock")
	start := time.Now()
	var fence, deadline int64
	err := waitqueue.Observed(ctx, &c, m.notices, m.channel(), l.token, waitqueue.Steps{
		Try: func(ctx context.Context) (waitqueue.Try, error) {
			f, try, now, err := m.obtainQueued(ctx, l.token)
			if err == nil && try.Done {
				fence, deadline = f, leaseFrom(now, m.cfg.TTL)
				try.Lease = m.cfg.TTL
			}
			return try, err
		},
		Take: func(h waitqueue.Handed) (bool, error) {
			if m.cfg.Replicas == 0 {
				return true, nil // held for the waiter until h.HeldUntil; Accept claims it
			}
			return m.claimRun(ctx, l.token, h.Deadline)
		},
		Accept: func(h waitqueue.Handed) {
			if m.cfg.Replicas == 0 {
				go l.claimHanded(ctx, h.Deadline)
			}
			fence, deadline = h.Value, h.HeldUntil.UnixMilli()
		},
		Leave: l.leave,
	})
	if err != nil {
		err = errs.Call(ctx, "Lock", m.base.Key, err)
		c.Failed(ctx, err)
		return nil, err
	}
	l.taken(start, fence, deadline)
	c.Acquired(ctx, 1)
	return l, nil
}

// leave takes a waiter that gave up out of the queue, and frees the lock
// or hands it on if the waiter holds it: the Leave of its wait, which runs
// detached from the wait's context. It sends no WAIT, which could only
// delay it.
func (l *Lock) leave(ctx context.Context) {
	noWait := script.Runner{Client: l.mutex.base.Client}
	l.mutex.leaveQueue(ctx, &noWait, l.token) //nolint:errcheck // best effort; the entry and the lock lapse by themselves
}

// claimHanded claims a lock handed to l until deadline, detached from ctx
// and bounded by cleanupTimeout; if it cannot, the lock lapses when its
// claim time runs out, and l is lost.
func (l *Lock) claimHanded(ctx context.Context, deadline time.Time) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	held, err := l.mutex.claimRun(ctx, l.token, deadline)
	if err != nil || !held {
		l.gone()
		l.keep.Lose()
		return
	}
	l.extended(deadline.UnixMilli())
}
