package lock

import (
	"context"
	"time"

	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// Lock takes the lock, blocking until it is free or ctx is done, without
// polling: an Unlock hands the lock straight to the first waiter. On
// success it returns the Lock; a handed lock whose claim then cannot
// reach Redis lapses within 3 seconds, and the Lock is lost (see Lost).
// On failure it holds nothing and has left the queue (a lock handed to it
// meanwhile is handed on): the error matches ctx.Err() when ctx ended,
// and ErrOutcomeUnknown when a call's outcome is unknown; call it again
// then. A try that go-redis sends again finds what its first run did: the
// lock taken, or the same place in the queue.
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
