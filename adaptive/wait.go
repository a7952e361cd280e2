package adaptive

import (
	"context"

	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// Acquire takes a slot, waiting until one is free or ctx is done. It does
// not poll: a refused try joins a queue in Redis, and the Success, Dropped
// or Ignore that frees a slot hands it, in the same script, to the first
// waiter in the queue, and wakes that waiter alone through a notice (so
// do the slots a Success adds to the limit); Acquire then returns at
// once, with no further round trip. A slot that lapses instead (its
// holder died) is taken by the first waiter whose try comes after the
// lapse: each waiter tries again when the earliest lease is due to lapse,
// and at least every second, to keep its place in the queue.
//
// A handed slot is held for the waiter for the claim time (3 seconds),
// or its TTL if shorter, from the hand-off, by the server's clock.
// Acquire returns on the notice only while the slot must still be held
// for it, with time for a claim to arrive; a waiter that reads the notice
// later (its process was stopped or starved) tries again instead, and
// returns only once that try holds a slot, so it never returns a slot
// whose hand-off lapsed and another caller took. A slot still held a
// second after the hand-off is claimed then, in the background, for its
// full TTL from the hand-off; one freed sooner, as most are, needs no
// claim. If the claim cannot reach Redis, the slot lapses at the end of
// the claim time. With Config.Replicas set, the claim is made, and
// acknowledged, before Acquire returns; if that took so long that the
// slot may have lapsed meanwhile, Acquire tries again instead, as it does
// after a try whose reply came a TTL or more after it was sent.
//
// If ctx is done first, Acquire returns an error that matches ctx.Err(),
// holds nothing and has left the queue: a slot handed to it as it gave up
// is handed on. Any other error is returned as it is; when it leaves the
// outcome unknown, it matches ErrOutcomeUnknown, and when the replicas
// did not acknowledge a write (Config.Replicas), ErrNotReplicated; either
// way Acquire frees what it may have taken before it returns (counting
// nothing), so a failed Acquire holds nothing: call it again. That
// release, detached from ctx, may take Acquire up to a second past ctx's
// end. A try that go-redis sends again after its reply was lost finds
// what its first run did: the slot taken, or the same place in the
// queue.
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
			r, err := l.acquire(ctx, s.id, true)
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
