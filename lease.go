package slotlimit

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrLeaseLost is the cause of a KeepAlive context's cancellation when the
// lease was lost: a renewal found it gone, or renewals failed until it
// must have lapsed.
var ErrLeaseLost = errors.New("slotlimit: lease lost")

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
// A nil Lease can be released safely, so deferring Release right after an
// acquire is always correct. A Lease
// never re-acquires a lease it lost. Its methods are safe for concurrent use.
type Lease struct {
	limiter *Limiter
	holder  string
	res     Result

	lost     chan struct{} // closed when the lease is lost
	lostOnce sync.Once

	mu       sync.Mutex
	released bool          // Release was called: renewals stop, Lost never fires
	freed    bool          // a Release succeeded, or there was nothing to free
	deadline time.Time     // a local-clock bound before which the lease cannot lapse
	stop     chan struct{} // closed by Release; stops KeepAlive
	stopOnce sync.Once
	done     chan struct{} // closed when KeepAlive's renewals have stopped
	work     context.Context
}

// Lease returns a handle on holder's lease, whether or not holder holds
// one; it sends nothing to Redis.
func (l *Limiter) Lease(holder string) *Lease {
	return &Lease{limiter: l, holder: holder, lost: make(chan struct{}), stop: make(chan struct{})}
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
	x := l.Lease(NewHolderID())
	start := time.Now()
	res, err := l.AcquireN(ctx, x.holder, n)
	if err != nil {
		return nil, err
	}
	x.res = res
	x.deadline = start.Add(l.cfg.TTL)
	return x, nil
}

// TryAcquireLease takes n units under a new random holder ID if they are
// free, and never waits. When they are not, it returns a nil Lease and an
// error matching ErrNotAcquired; nothing is held. On any other error it
// returns a nil Lease too; when the error leaves the outcome unknown, the
// new holder is released first, since no one else knows its ID. Callers
// that want the refusal's Result call TryAcquireN with a holder of their
// own.
func (l *Limiter) TryAcquireLease(ctx context.Context, n int64) (*Lease, error) {
	x := l.Lease(NewHolderID())
	start := time.Now()
	res, err := l.TryAcquireN(ctx, x.holder, n)
	if err != nil {
		if outcomeUnknown(err) {
			l.releaseDetached(ctx, x.holder)
		}
		return nil, err
	}
	if !res.Acquired {
		return nil, fmt.Errorf("%w: %d units wanted, %d of %d in use", ErrNotAcquired, n, res.Count, res.Limit)
	}
	x.res = res
	x.deadline = start.Add(l.cfg.TTL)
	return x, nil
}

// Do runs fn while holding n units under a new random holder ID: it waits
// for them as AcquireLease does, keeps the lease alive while fn runs, and
// releases it when fn returns or panics. fn's context is derived from ctx
// and is cancelled, with cause ErrLeaseLost, if the lease is lost, so that
// the work stops once it no longer holds its units.
//
// When the units cannot be had, Do returns AcquireN's error and fn does
// not run; the error matches ctx.Err() if ctx ended first. Otherwise Do
// returns fn's error, joined with an error matching ErrLeaseLost if the
// lease was lost while fn ran, and with the release's error if the
// release failed, in which case the lease lapses by itself after TTL.
func (l *Limiter) Do(ctx context.Context, n int64, fn func(ctx context.Context) error) (err error) {
	lease, err := l.AcquireLease(ctx, n)
	if err != nil {
		return err
	}
	work := lease.KeepAlive(ctx)
	defer func() {
		if errors.Is(context.Cause(work), ErrLeaseLost) {
			err = errors.Join(err, fmt.Errorf("slotlimit: do %q: %w while the work ran", l.cfg.Key, ErrLeaseLost))
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if _, rerr := lease.Release(rctx); rerr != nil {
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
	if x == nil || x.lost == nil {
		return closedChan
	}
	return x.lost
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Release frees the lease and stops KeepAlive. It reports whether a live
// lease was freed. Releasing a nil Lease, or one already released, does
// nothing and returns false and a nil error; after a Release that failed,
// Release tries again. A zero Lease, or one of a zero or nil Limiter,
// returns an error matching ErrInvalidConfig.
func (x *Lease) Release(ctx context.Context) (bool, error) {
	if x == nil {
		return false, nil
	}
	if err := x.limiter.usable(); err != nil {
		return false, err
	}
	x.mu.Lock()
	if x.freed {
		x.mu.Unlock()
		return false, nil
	}
	x.released = true
	x.stopOnce.Do(func() { close(x.stop) })
	done := x.done
	x.mu.Unlock()
	if done != nil {
		<-done // no renewal races the release
	}
	ok, err := x.limiter.Release(ctx, x.holder)
	if err == nil {
		x.mu.Lock()
		x.freed = true
		x.mu.Unlock()
	}
	return ok, err
}

// Renew extends the lease to TTL from now. It returns false, and the lease
// is lost, when the holder no longer holds it; it never re-acquires.
func (x *Lease) Renew(ctx context.Context) (bool, error) {
	if x == nil {
		return false, nil
	}
	if err := x.limiter.usable(); err != nil {
		return false, err
	}
	start := time.Now()
	_, ok, err := x.limiter.renew(ctx, x.holder)
	if err != nil {
		return false, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.released {
		return ok, nil
	}
	if !ok {
		x.markLost()
		return false, nil
	}
	x.deadline = start.Add(x.limiter.cfg.TTL)
	return true, nil
}

func (x *Lease) markLost() {
	x.lostOnce.Do(func() { close(x.lost) })
}

// KeepAlive renews the lease about every third of its TTL, in the
// background, until the lease is released or lost or ctx ends. It returns
// a context for the work, derived from ctx, that is cancelled when the
// lease is lost (with cause ErrLeaseLost) or released. A failed renewal is
// retried sooner; if renewals keep failing past the point where the lease
// must have lapsed, the lease is lost. Calling KeepAlive again returns the
// same context. On a nil or released Lease it returns a context cancelled
// with cause ErrLeaseLost, and on a zero Lease, or one of a zero or nil
// Limiter, one cancelled with an error matching ErrInvalidConfig.
func (x *Lease) KeepAlive(ctx context.Context) context.Context {
	work, cancel := context.WithCancelCause(ctx)
	if x == nil {
		cancel(ErrLeaseLost)
		return work
	}
	if err := x.limiter.usable(); err != nil {
		cancel(err)
		return work
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.work != nil {
		cancel(nil)
		return x.work
	}
	x.work = work
	if x.released {
		cancel(ErrLeaseLost)
		return work
	}
	x.done = make(chan struct{})
	go x.keepAlive(work, cancel)
	return work
}

// keepAlive is KeepAlive's renewal loop.
func (x *Lease) keepAlive(ctx context.Context, cancel context.CancelCauseFunc) {
	defer close(x.done)
	// A renewal in flight is cut short by Release, so Release never waits long.
	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	go func() {
		select {
		case <-x.stop:
			rcancel()
		case <-rctx.Done():
		}
	}()

	ttl := x.limiter.cfg.TTL
	every, retry := ttl/3, max(ttl/10, 10*time.Millisecond)
	timer := time.NewTimer(every)
	defer timer.Stop()
	if x.deadline.IsZero() {
		timer.Reset(0) // a handle from Limiter.Lease: learn the deadline now
	}
	for {
		select {
		case <-x.stop:
			cancel(context.Canceled)
			return
		case <-x.lost:
			cancel(ErrLeaseLost)
			return
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		ok, err := x.Renew(rctx)
		switch {
		case err == nil && !ok:
			// x.lost is closed now, unless Release came first.
		case err == nil:
			timer.Reset(every)
		default:
			x.mu.Lock()
			if !x.released && !x.deadline.IsZero() && !time.Now().Before(x.deadline) {
				x.markLost()
			}
			x.mu.Unlock()
			timer.Reset(retry)
		}
	}
}
