package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// A system is the simulated external system: it serves at most capacity
// calls at once, each for callTime; a call that finds it full is turned
// away, and its caller learns so only after timeout, as a refused
// connection or a 503 behind a proxy's timeout would tell it.
type system struct {
	callTime, timeout time.Duration
	capacity          atomic.Int64
	serving           atomic.Int64 // calls being served
	calling           atomic.Int64 // calls in flight, served or being turned away
}

// call makes one call and reports whether the system served it.
func (s *system) call(ctx context.Context) bool {
	s.calling.Add(1)
	defer s.calling.Add(-1)
	if s.serving.Add(1) > s.capacity.Load() {
		s.serving.Add(-1)
		sleep(ctx, s.timeout)
		return false
	}
	sleep(ctx, s.callTime)
	s.serving.Add(-1)
	return true
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// An outcome is what a caller reports of its call.
type outcome int

const (
	success outcome = iota
	dropped
)

// A variant is one way to limit the callers: it hands out slots to the
// callers of instance i, and reports its limit (summed over the
// instances, for limits kept per instance).
type variant struct {
	name    string
	acquire func(ctx context.Context, instance int) (release func(outcome), err error)
	limit   func(ctx context.Context) (int64, error)
	stop    func() // wakes the callers that wait, as the load ends
}

// aimd is the same algorithm as the adaptive package's, kept in one
// process's memory, as the in-process libraries keep theirs: the limit of
// one instance, moved by that instance's own calls alone.
type aimd struct {
	min, max, step int64
	factor         float64
	window         time.Duration

	mu       sync.Mutex
	cond     *sync.Cond
	limit    int64
	inUse    int64
	down, up time.Time
	delay    time.Duration // from grant to drop, of the last drop that counted
	peak     int64         // the limit before that drop
	lat      latency       // with a tolerance, the latency rule (see queue.go)
	stopped  bool
}

// holdWindows, nearSteps and maxDelayWindows are release.lua's HOLD,
// NEAR and MAXDELAY.
const holdWindows, nearSteps, maxDelayWindows = 5, 2, 20

func newAIMD(min, max, initial, step int64, factor float64, window time.Duration) *aimd {
	a := &aimd{min: min, max: max, step: step, factor: factor, window: window, limit: initial}
	a.cond = sync.NewCond(&a.mu)
	return a
}

// acquire waits for a slot, and returns when it was granted; false when
// the load stopped.
func (a *aimd) acquire() (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.inUse >= a.limit && !a.stopped {
		a.cond.Wait()
	}
	if a.stopped {
		return time.Time{}, false
	}
	a.inUse++
	return time.Now(), true
}

// release frees a slot granted at granted, and moves the limit as
// release.lua does.
func (a *aimd) release(o outcome, granted time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	switch o {
	case dropped:
		if now.Sub(a.down) >= a.window && granted.After(a.down) {
			a.peak = a.limit
			a.limit = max(a.min, min(a.limit-1, int64(float64(a.limit)*a.factor)))
			a.down, a.delay = now, min(maxDelayWindows*a.window, now.Sub(granted))
		}
	case success:
		calm := true
		if a.lat.tolerance > 0 {
			calm = a.sense(now, granted)
		}
		pace := a.window
		if a.limit >= a.peak-nearSteps*a.step && a.limit < a.peak+a.step {
			pace = max(a.window, 2*a.delay)
		}
		if calm && a.limit-a.inUse <= max(1, a.limit/10) && now.Sub(a.up) >= pace &&
			now.Sub(a.down) >= max(holdWindows*a.window, a.delay) {
			a.limit = min(a.max, a.limit+a.step)
			a.up = now
		}
	}
	a.inUse--
	a.cond.Broadcast()
}

func (a *aimd) current() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.limit
}

func (a *aimd) stop() {
	a.mu.Lock()
	a.stopped = true
	a.mu.Unlock()
	a.cond.Broadcast()
}
