package adaptive

import (
	"context"

	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// Acquire takes a slot, blocking until one is free or ctx is done,
// without polling: the call that frees a slot hands it straight to the
// first waiter. On success it returns the Slot. On failure it holds
// nothing and has left the queue (a slot handed to it meanwhile is handed
// on): the error matches ctx.Err() when ctx ended, ErrOutcomeUnknown when
// a call's outcome is unknown, and ErrNotReplicated when the replicas did
// not acknowledge the slot; call it again then. What it may have taken is
// freed, counting nothing, up to a second past ctx's end. A try that
// go-redis sends again finds what its first run did: the slot taken, or
// the same place in the queue.
func (l *Limiter) Acquire(ctx context.Context) (*Slot, error) {
	if err := l.check(ctx, "Acquire"); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, errs.Op("Acquire", l.base.Key, err) // nothing was sent
	}
	s := l.newSlot()
	c := l.begin("Acquire", s.id)
	var g grant
	err := waitqueue.Observed(ctx, &c, l.notices, l.channel(), s.id, waitqueue.Steps{
		Try: func(ctx context.Context) (waitqueue.Try, error) {
			r, err := l.acquire(ctx, s, true)
			if err != nil {
				return r.try, err
			}
			if r.held {
				r.try.Lease = l.cfg.TTL
			}
			g = r
			return r.try, nil
		},
		Take: func(h waitqueue.Handed) (bool, error) {
			if l.cfg.Replicas == 0 {
				return true, nil // held for the waiter until h.HeldUntil; Accept claims it
			}
			return l.claim(ctx, s.id, h.Deadline)
		},
		Accept: func(h waitqueue.Handed) {
			deadline := h.Deadline // Take claimed it
			if l.cfg.Replicas == 0 {
				s.claimLater(ctx, h.Deadline)
				deadline = h.HeldUntil
			}
			inUse, limit := unpackHanded(h.Value)
			g = grant{held: true, deadline: deadline.UnixMilli(), now: h.HandedAt.UnixMilli(), inUse: inUse, limit: limit}
		},
		Leave: s.leave,
	})
	if err != nil {
		err = errs.Call(ctx, "Acquire", l.base.Key, err)
		c.Failed(ctx, err)
		return nil, err
	}
	s.granted(g.now, g.deadline)
	c.SetLimit(g.limit)
	c.Acquired(ctx, g.inUse)
	return s, nil
}
