package adaptive

import (
	"context"
	"crypto/rand"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// cleanupTimeout bounds the release that follows a failed TryAcquire or
// Acquire, and the claim of a handed slot.
const cleanupTimeout = time.Second

// A Slot is one slot of a shared limit, held from a TryAcquire or Acquire
// until exactly one of Success, Dropped or Ignore frees it and reports how
// the call it guarded went:
//
//	slot, err := limiter.Acquire(ctx)
//	if err != nil {
//		return err
//	}
//	err = callSystem(ctx)
//	switch {
//	case err == nil:
//		slot.Success(ctx)
//	case overloaded(err): // refused, timed out, 503, 429
//		slot.Dropped(ctx)
//	default: // a bad request, a cancelled ctx: nothing about capacity
//		slot.Ignore(ctx)
//	}
//
// A slot not freed lapses TTL after it was granted, by the server's
// clock, and counts nothing. The first of Success, Dropped and Ignore
// that gets an answer frees the slot; every later call on the Slot sends
// nothing and returns ErrNotHeld. A Slot's methods are safe for
// concurrent use. A nil or zero *Slot was not made by TryAcquire or
// Acquire: its methods return an error matching ErrInvalidConfig.
type Slot struct {
	l  *Limiter
	id string

	// grantedAt is when the slot was granted, in ms by the server's clock.
	grantedAt int64
	// deadline is the time, in ms by the server's clock, that the lease
	// lasts at least until, as the server's replies prove it; 0 when
	// unknown. It only grows.
	deadline atomic.Int64

	mu    sync.Mutex  // held by a call that frees the slot
	done  bool        // a call that frees it got an answer
	claim *time.Timer // the claim of a handed slot, until it runs; nil: none
}

// newSlot returns a Slot with a new holder ID that holds nothing yet.
func (l *Limiter) newSlot() *Slot {
	return &Slot{l: l, id: rand.Text()}
}

// granted records that the slot was granted at now (ms, the server's
// clock), its lease lasting at least until deadline.
func (s *Slot) granted(now, deadline int64) {
	s.grantedAt = now
	s.extended(deadline)
}

// extended records that the lease lasts at least until deadline.
func (s *Slot) extended(deadline int64) {
	for {
		old := s.deadline.Load()
		if deadline <= old || s.deadline.CompareAndSwap(old, deadline) {
			return
		}
	}
}

// ID returns the slot's holder ID in Redis: 128 random bits, as text, as
// Inspect lists it. It is "" for a nil Slot.
func (s *Slot) ID() string {
	if s == nil {
		return ""
	}
	return s.id
}

// Success frees the slot and reports that the call succeeded: while the
// limit was nearly in use (at most a tenth of it, or one slot, free, or a
// caller waiting), the limit grows by Config.Step, at most once per
// Config.Window and not within 5 windows of a decrease (see Config.Window
// for how drops that take long to show slow it). With
// Config.RTTTolerance set, it also reports the call's latency, from the
// slot's grant to now, to the shared latency estimate, which may lower
// the limit instead (see Config.RTTTolerance).
//
// It returns an error matching ErrNotHeld, and frees and counts nothing,
// when the slot's lease had lapsed or the slot was freed already. After
// an error matching ErrOutcomeUnknown, call Success (or Dropped, or
// Ignore) again: the slot is freed once and one outcome counted, however
// often the call is sent. A call sent again whose first run freed the
// slot returns nil before the lease's deadline and ErrNotHeld after it.
func (s *Slot) Success(ctx context.Context) error {
	return s.free(ctx, "Success", outcomeSuccess)
}

// Dropped frees the slot and reports that the system behind the limit
// refused the call, failed it or let it time out. The limit shrinks by
// Config.Factor (by one slot at least, to Config.Min at most), unless it
// went down less than a Config.Window ago or the slot was granted before
// it last went down, so that the drops of one overload count once; a slot
// whose grant time is unknown (one a call sent again found held) counts
// nothing. Errors are as for Success.
func (s *Slot) Dropped(ctx context.Context) error {
	return s.free(ctx, "Dropped", outcomeDropped)
}

// Ignore frees the slot and leaves the limit as it is: the call's outcome
// says nothing of the system's capacity (a bad request, a cancelled
// context, an error of the caller's own). Errors are as for Success.
func (s *Slot) Ignore(ctx context.Context) error {
	return s.free(ctx, "Ignore", outcomeIgnore)
}

// free runs release.lua for the slot with outcome, as method.
func (s *Slot) free(ctx context.Context, method, outcome string) error {
	if s == nil || s.l == nil {
		return errs.Check(ctx, false, method, "")
	}
	l := s.l
	if err := errs.Check(ctx, true, method, l.base.Key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return errs.Op(method, l.base.Key, ErrNotHeld)
	}
	if s.claim != nil && s.claim.Stop() {
		s.claim = nil // freed before its claim was due: no claim is needed
	}
	c := l.begin(method, s.id)
	f, err := l.release(ctx, release{holder: s.id, outcome: outcome, granted: s.grantedAt, known: s.deadline.Load()})
	if err != nil {
		err = errs.Call(ctx, method, l.base.Key, err)
		c.Failed(ctx, err)
		return err
	}
	s.done = true
	c.SetLimit(f.after)
	c.SetLatency(f.latency, f.noLoad)
	if f.held && f.after != f.before {
		c.LimitChanged(ctx, f.before, f.after, f.inUse)
	}
	c.Released(ctx, f.held)
	if !f.held {
		return errs.Op(method, l.base.Key, ErrNotHeld)
	}
	return nil
}

// leave frees, detached from ctx and bounded by cleanupTimeout, what the
// slot may hold after a failed TryAcquire or Acquire, takes it out of the
// queue, and hands what it held on, counting nothing. It sends no WAIT,
// even with Config.Replicas set: waiting for replicas could only delay
// it, past cleanupTimeout when they are down.
func (s *Slot) leave(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	// A try's run, whose outcome the caller did not wait for, may still
	// take a slot or queue the holder: free it after that run.
	s.l.unsettled.Settle(ctx, s.id)
	noWait := script.Runner{Client: s.l.base.Client}
	s.l.runReleases(ctx, &noWait, []release{{holder: s.id, outcome: outcomeIgnore}}) //nolint:errcheck // best effort; the lease and the entry lapse by themselves
}

// claimDelay is how long after a hand-off a slot still held is claimed
// for its full lease: a slot freed sooner (most are) needs no claim.
const claimDelay = waitqueue.EntryTTL / 3

// claimLater claims a slot handed to s until deadline if s still holds it
// claimDelay from now, a third of the claim time, which leaves the claim
// two thirds of it to reach Redis.
func (s *Slot) claimLater(ctx context.Context, deadline time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claim = time.AfterFunc(claimDelay, func() { s.claimHanded(ctx, deadline) })
}

// claimHanded claims a slot handed to s until deadline, detached from ctx
// and bounded by cleanupTimeout; if it cannot, the slot lapses when its
// claim time runs out.
func (s *Slot) claimHanded(ctx context.Context, deadline time.Time) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if held, err := s.l.claim(ctx, s.id, deadline); err == nil && held {
		s.extended(deadline.UnixMilli())
	}
}
