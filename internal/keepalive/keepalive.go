// Package keepalive keeps a lease alive: a lease that lapses on a
// server's clock unless it is renewed, held by in-process work. It renews
// the lease in the background, reports it lost when a renewal finds it
// gone or renewals fail until it must have lapsed, and cancels the work's
// context then.
package keepalive

import (
	"context"
	"sync"
	"time"
)

// Config is what a Lease needs to know of the lease it keeps.
type Config struct {
	// TTL is the lease time: a lease lapses TTL after it was taken or
	// last renewed, unless it is released.
	TTL time.Duration

	// Renew extends the lease on the server to TTL from now. It returns
	// false when the lease is gone, and must never take it again.
	Renew func(ctx context.Context) (bool, error)

	// Release frees the lease on the server and reports whether a live
	// lease was freed.
	Release func(ctx context.Context) (bool, error)

	// ErrLost is the cause of a KeepAlive context's cancellation when
	// the lease is lost.
	ErrLost error

	// OnLost, if set, is called once, when the lease is found lost,
	// before Lost's channel is closed, with the context of the call that
	// found it: the renewal's, or KeepAlive's.
	OnLost func(ctx context.Context)
}

// A Lease is the local side of one lease. Its deadline is a bound on the
// local clock before which the lease cannot lapse: TTL after a call that
// took or renewed it was sent. Its methods are safe for concurrent use.
type Lease struct {
	cfg Config

	lost     chan struct{} // closed when the lease is lost
	lostOnce sync.Once

	mu       sync.Mutex
	released bool          // Release was called: renewals stop, Lost never fires
	freed    bool          // a Release succeeded, or there was nothing to free
	deadline time.Time     // zero until known
	stop     chan struct{} // closed by Release; stops KeepAlive
	stopOnce sync.Once
	done     chan struct{} // closed when KeepAlive's renewals have stopped
	work     context.Context
}

// New returns a Lease kept by cfg's functions. Its deadline is unknown
// until Taken or a renewal sets it.
func New(cfg Config) *Lease {
	return &Lease{cfg: cfg, lost: make(chan struct{}), stop: make(chan struct{})}
}

// Taken records that the lease was taken by a call sent at start, so that
// it cannot lapse before start plus TTL.
func (x *Lease) Taken(start time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.deadline = start.Add(x.cfg.TTL)
}

// Lost returns a channel that is closed when the lease is found lost: a
// renewal found it gone, or renewals kept failing until it must have
// lapsed. It is never closed for a lease that was released. For a nil
// Lease, which holds nothing, it is closed.
func (x *Lease) Lost() <-chan struct{} {
	if x == nil {
		return closed
	}
	return x.lost
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Release stops KeepAlive, waits until no renewal is in flight, and frees
// the lease with Config.Release, whose result it returns. Once a Release
// has succeeded, Release does nothing and returns false and a nil error;
// after one that failed, it tries again.
func (x *Lease) Release(ctx context.Context) (bool, error) {
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
	ok, err := x.cfg.Release(ctx)
	if err == nil {
		x.mu.Lock()
		x.freed = true
		x.mu.Unlock()
	}
	return ok, err
}

// Renew renews the lease with Config.Renew. When the lease is gone it
// returns false, and the lease is lost, unless it was released meanwhile.
func (x *Lease) Renew(ctx context.Context) (bool, error) {
	start := time.Now()
	ok, err := x.cfg.Renew(ctx)
	if err != nil {
		return false, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.released {
		return ok, nil
	}
	if !ok {
		x.markLost(ctx)
		return false, nil
	}
	x.deadline = start.Add(x.cfg.TTL)
	return true, nil
}

// Lose marks the lease lost, as a renewal that found it gone does, for a
// caller that learned so another way; it does nothing to a lease that was
// released.
func (x *Lease) Lose() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.released {
		ctx := x.work
		if ctx == nil {
			ctx = context.Background()
		}
		x.markLost(ctx)
	}
}

func (x *Lease) markLost(ctx context.Context) {
	x.lostOnce.Do(func() {
		// Reported first, so that whoever sees Lost closed finds it reported.
		if x.cfg.OnLost != nil {
			x.cfg.OnLost(ctx)
		}
		close(x.lost)
	})
}

// KeepAlive renews the lease about every third of its TTL, in the
// background, until the lease is released or lost or ctx ends. It returns
// a context for the work, derived from ctx, that is cancelled when the
// lease is lost (with cause Config.ErrLost) or released. A failed renewal
// is retried sooner, every tenth of the TTL; if renewals keep failing past
// the lease's deadline, the lease is lost. A Lease whose deadline is not
// known yet is renewed at once. Calling KeepAlive again returns the same
// context; on a released Lease it returns one cancelled with cause
// Config.ErrLost.
func (x *Lease) KeepAlive(ctx context.Context) context.Context {
	work, cancel := context.WithCancelCause(ctx)
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.work != nil {
		cancel(nil)
		return x.work
	}
	x.work = work
	if x.released {
		cancel(x.cfg.ErrLost)
		return work
	}
	x.done = make(chan struct{})
	go x.keepAlive(work, cancel)
	return work
}

// Cancelled returns a context derived from ctx and already cancelled with
// cause: the KeepAlive context of a lease that cannot be kept.
func Cancelled(ctx context.Context, cause error) context.Context {
	work, cancel := context.WithCancelCause(ctx)
	cancel(cause)
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

	ttl := x.cfg.TTL
	every, retry := ttl/3, max(ttl/10, 10*time.Millisecond)
	timer := time.NewTimer(every)
	defer timer.Stop()
	x.mu.Lock()
	unknown := x.deadline.IsZero()
	x.mu.Unlock()
	if unknown {
		timer.Reset(0) // learn the deadline now
	}
	for {
		select {
		case <-x.stop:
			cancel(context.Canceled)
			return
		case <-x.lost:
			cancel(x.cfg.ErrLost)
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
				x.markLost(ctx)
			}
			x.mu.Unlock()
			timer.Reset(retry)
		}
	}
}
