package slotlimit

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/slotlimit/slotlimit/internal/keepalive"
	"github.com/slotlimit/slotlimit/internal/observe"
)

// A Lease is a handle on one holder's lease, for in-process work. It
// releases, renews and keeps itself alive:
//
//	lease, err := limiter.AcquireLease(ctx, 1)
//	defer lease.Release(context.WithoutCancel(ctx))
//	if err != nil {
//		return err
//	}
//	ctx = lease.KeepAlive(ctx) // cancelled if the lease is lost
//
// Deferring Release right after an acquire is safe: the Lease of a failed
// acquire is nil, and its Release returns an error matching
// ErrInvalidConfig and does nothing else. A Lease never re-acquires a
// lease it lost. Its methods are safe for concurrent use.
type Lease struct {
	limiter *Limiter
	holder  string
	res     Result
	keep    *keepalive.Lease // renewals, release and the lost signal

	mu    sync.Mutex
	until int64 // the lease's deadline on the server's clock (ms), as the server gave it; 0: unknown
	gone  bool  // a renewal or the claim of a handed lease found it gone
}

// Lease returns a handle on holder's lease, whether or not holder holds
// one; it sends nothing to Redis.
func (l *Limiter) Lease(holder string) *Lease {
	return l.lease(holder, true)
}

// lease is Lease; reported says whether its renewals and its release
// report to the Observer as calls of their own, as they do but for the
// lease of Do, which is one call.
func (l *Limiter) lease(holder string, reported bool) *Lease {
	x := &Lease{limiter: l, holder: holder}
	x.keep = keepalive.New(keepalive.Config{
		TTL: l.Config().TTL,
		Renew: func(ctx context.Context) (bool, error) {
			at, ok, err := l.renew(ctx, holder, reported)
			switch {
			case ok:
				x.heldUntil(at)
			case err == nil:
				x.lose()
			}
			return ok, err
		},
		Release: func(ctx context.Context) (bool, error) {
			err := l.release(ctx, holder, x.deadline(), reported)
			return err == nil, err
		},
		ErrLost: ErrNotHeld,
		OnLost: func(ctx context.Context) {
			observe.Lost(ctx, l.Config().Observer, errs.Package(), l.Config().Key, holder, ErrNotHeld)
		},
	})
	return x
}

// heldUntil records that the server gave the lease the deadline at.
// Deadlines only grow: no script shortens a live lease.
func (x *Lease) heldUntil(at time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.gone {
		x.until = max(x.until, at.UnixMilli())
	}
}

// lose records that the lease was found gone, so that its deadline no
// longer speaks for it.
func (x *Lease) lose() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.gone, x.until = true, 0
}

// deadline returns the lease's deadline on the server's clock in ms, as
// the server gave it; 0 when unknown.
func (x *Lease) deadline() int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.until
}

// NewHolderID returns a random 128-bit holder ID, for callers that have no
// name of their own to hold a lease by.
func NewHolderID() string {
	return rand.Text()
}

// AcquireLease takes n units under a new random holder ID, waiting until
// they are free or ctx is done, and returns the Lease. On error it returns
// a nil Lease and, as AcquireN does, leaves no units held.
func (l *Limiter) AcquireLease(ctx context.Context, n int64) (*Lease, error) {
	return l.acquireLease(ctx, "AcquireLease", n, true)
}

// acquireLease is AcquireLease for a call of method, which its errors and
// its report to the Observer name; reported is as for lease.
func (l *Limiter) acquireLease(ctx context.Context, method string, n int64, reported bool) (*Lease, error) {
	x := l.lease(NewHolderID(), reported)
	start := time.Now()
	res, err := l.acquireN(ctx, method, x.holder, n, x) // x learns the lease's deadline
	if err != nil {
		return nil, err
	}
	x.res = res
	x.keep.Taken(start)
	return x, nil
}

// TryAcquireLease takes n units under a new random holder ID if they are
// free, and never waits. When they are not, it returns a nil Lease and an
// error matching ErrNotAcquired. On any error it returns a nil Lease and
// holds nothing: when the error leaves the outcome unknown, the new holder
// is released first, since no one else knows its ID. Callers that want
// the refusal's Result call TryAcquireN with a holder of their own.
func (l *Limiter) TryAcquireLease(ctx context.Context, n int64) (*Lease, error) {
	x := l.Lease(NewHolderID())
	start := time.Now()
	res, err := l.tryAcquireN(ctx, "TryAcquireLease", x.holder, n)
	if err != nil {
		if errors.Is(err, ErrOutcomeUnknown) {
			l.releaseDetached(ctx, x.holder)
		}
		return nil, err
	}
	if !res.Acquired {
		return nil, errs.Op("TryAcquireLease", l.cfg.Key,
			fmt.Errorf("%w: %d units wanted, %d of %d in use", ErrNotAcquired, n, res.Count, res.Limit))
	}
	x.res = res
	x.heldUntil(res.ExpiresAt)
	x.keep.Taken(start)
	return x, nil
}

// Do runs fn while holding n units under a new random holder ID: it waits
// for them as AcquireLease does, keeps the lease alive while fn runs, and
// releases it when fn returns or panics. fn's context is derived from ctx
// and is cancelled, with cause ErrNotHeld, if the lease is lost. When the
// units cannot be had, fn does not run and Do returns AcquireN's error;
// otherwise fn's error, joined with one matching ErrNotHeld if the lease
// was lost while fn ran, and with the release's error if it failed (the
// lease then lapses after TTL). A nil fn returns an error matching
// ErrInvalidArgument. Config.Observer is told of Do as of one call, its
// acquire, with Op "Do".
func (l *Limiter) Do(ctx context.Context, n int64, fn func(ctx context.Context) error) (err error) {
	if fn == nil {
		if err := l.usable(ctx, "Do"); err != nil {
			return err
		}
		return errs.Op("Do", l.cfg.Key, errs.Argument("nil function"))
	}
	lease, err := l.acquireLease(ctx, "Do", n, false) // Do is one call
	if err != nil {
		return err
	}
	work := lease.KeepAlive(ctx)
	defer func() {
		lost := errors.Is(context.Cause(work), ErrNotHeld)
		if lost {
			err = errors.Join(err, errs.Op("Do", l.cfg.Key, fmt.Errorf("%w: the lease was lost while the work ran", ErrNotHeld)))
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if rerr := lease.Release(rctx); rerr != nil && !(lost && errors.Is(rerr, ErrNotHeld)) {
			err = errors.Join(err, rerr)
		}
	}()
	return fn(work)
}

// Holder returns the holder ID the lease is held by.
func (x *Lease) Holder() string {
	if x == nil {
		return ""
	}
	return x.holder
}

// Result returns the outcome of the acquire that made the lease; the zero
// Result for a Lease from Limiter.Lease.
func (x *Lease) Result() Result {
	if x == nil {
		return Result{}
	}
	return x.res
}

// Lost returns a channel that is closed when the lease is found lost: a
// renewal found it gone, or renewals kept failing until it must have
// lapsed. It is never closed for a lease that was released. For a nil or
// zero Lease, which holds nothing, it is closed.
func (x *Lease) Lost() <-chan struct{} {
	var keep *keepalive.Lease // nil for a nil or zero Lease, whose Lost is closed
	if x != nil {
		keep = x.keep
	}
	return keep.Lost()
}

// Release frees the lease and stops KeepAlive. It returns nil when it
// freed a live lease, and an error matching ErrNotHeld when the lease was
// not held: lapsed, never taken, or released already. A Release sent
// again, or called again after an error matching ErrOutcomeUnknown,
// answers as its first run did. A nil or zero Lease, or one of a zero or
// nil Limiter, returns an error matching ErrInvalidConfig and sends
// nothing.
func (x *Lease) Release(ctx context.Context) error {
	if err := x.usable(ctx, "Release"); err != nil {
		return err
	}
	freed, err := x.keep.Release(ctx)
	if err == nil && !freed { // a Release before this one freed it
		err = errs.Op("Release", x.limiter.cfg.Key, ErrNotHeld)
	}
	return err
}

// Renew extends the lease to TTL from now. It returns an error matching
// ErrNotHeld, and the lease is lost, when the holder no longer holds it,
// or the Lease was released; it never re-acquires. A nil or zero Lease
// returns an error matching ErrInvalidConfig. After an error matching
// ErrOutcomeUnknown, call Renew again.
func (x *Lease) Renew(ctx context.Context) error {
	if err := x.usable(ctx, "Renew"); err != nil {
		return err
	}
	ok, err := x.keep.Renew(ctx)
	if err == nil && !ok {
		err = errs.Op("Renew", x.limiter.cfg.Key, ErrNotHeld)
	}
	return err
}

// KeepAlive renews the lease, about every third of its TTL, until it is
// released or lost or ctx ends, and returns a context for the work,
// derived from ctx, that is cancelled when the lease is lost (with cause
// ErrNotHeld) or released; calling it again returns the same context. A
// lease whose renewals fail until it must have lapsed is lost. The
// context is cancelled at once when the Lease cannot be kept: with cause
// ErrNotHeld for a released Lease, ErrInvalidConfig for a nil or zero
// Lease (whatever ctx is), and ErrInvalidArgument for a nil ctx (a
// context of its own).
func (x *Lease) KeepAlive(ctx context.Context) context.Context {
	if err := x.usable(ctx, "KeepAlive"); err != nil {
		parent := ctx
		if parent == nil {
			parent = context.Background()
		}
		return keepalive.Cancelled(parent, err)
	}
	return x.keep.KeepAlive(ctx)
}

// usable returns the error of a call of method made with ctx, or nil
// when the call may go on: a nil or zero Lease, and one of a zero or nil
// Limiter, was not made by New.
func (x *Lease) usable(ctx context.Context, method string) error {
	if x == nil || x.keep == nil {
		return errs.Check(ctx, false, method, "")
	}
	return x.limiter.usable(ctx, method)
}
