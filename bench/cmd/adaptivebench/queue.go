package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// A queueSystem is the simulated system of -queue: capacity servers, each
// serving one call at a time for callTime, and a FIFO queue in front of
// them, as a database or a service behind a load balancer has. It turns
// nothing away: a call waits in the queue until a server is free, and its
// caller gives up after timeout, which counts as a drop. A call given up
// while queued leaves the queue; one given up while served keeps its
// server until done, as a server that is not told keeps working.
type queueSystem struct {
	callTime, timeout time.Duration
	calling           atomic.Int64 // calls in flight, queued or served

	mu       sync.Mutex
	capacity int64
	busy     int64 // servers serving a call
	queue    []*queued
}

// A queued is one call, in the queue and then served.
type queued struct {
	done      chan struct{} // closed when served
	abandoned bool          // its caller gave up while it was queued
}

func newQueueSystem(callTime, timeout time.Duration, capacity int64) *queueSystem {
	return &queueSystem{callTime: callTime, timeout: timeout, capacity: capacity}
}

// serve makes one call, and returns its latency and whether it was
// served before the caller's timeout.
func (s *queueSystem) serve() (time.Duration, bool) {
	start := time.Now()
	s.calling.Add(1)
	defer s.calling.Add(-1)
	c := &queued{done: make(chan struct{})}
	s.mu.Lock()
	s.queue = append(s.queue, c)
	s.dispatch()
	s.mu.Unlock()
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	select {
	case <-c.done:
		return time.Since(start), true
	case <-t.C:
		s.mu.Lock()
		c.abandoned = true
		s.mu.Unlock()
		return time.Since(start), false
	}
}

// dispatch hands free servers to the calls queued first; s.mu is held.
func (s *queueSystem) dispatch() {
	for s.busy < s.capacity && len(s.queue) > 0 {
		c := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		if c.abandoned {
			continue
		}
		s.busy++
		time.AfterFunc(s.callTime, func() {
			close(c.done)
			s.mu.Lock()
			s.busy--
			s.dispatch()
			s.mu.Unlock()
		})
	}
}

func (s *queueSystem) setCapacity(c int64) {
	s.mu.Lock()
	s.capacity = c
	s.dispatch()
	s.mu.Unlock()
}

func (s *queueSystem) inFlight() int64 { return s.calling.Load() }

// dropSystem adapts the system of the drop-driven run to a callee.
type dropSystem struct{ *system }

func (s dropSystem) serve() (time.Duration, bool) {
	start := time.Now()
	ok := s.call(context.Background())
	return time.Since(start), ok
}

func (s dropSystem) setCapacity(c int64) { s.capacity.Store(c) }
func (s dropSystem) inFlight() int64     { return s.calling.Load() }

// A callee is the simulated system a run calls.
type callee interface {
	serve() (latency time.Duration, served bool)
	setCapacity(int64)
	inFlight() int64
}

// The latency rule of release.lua, kept in memory for the per-instance
// variant of -queue: its PERIOD, MAXRTT and MAXN.
const (
	latencyPeriod = 100
	maxRTT        = 1 << 20 * time.Millisecond
	maxSamples    = 1 << 16
)

// latency is release.lua's latency estimate, in one process's memory,
// fed by one instance's calls alone.
type latency struct {
	tolerance float64
	recent    time.Duration // the last window's mean; 0: none
	sum       time.Duration
	n         int64
	at        time.Time // the window's start
	least     time.Duration
	prev      time.Duration // the last period's least; 0: none
	leastAt   time.Time     // the period's start
}

// sense feeds one success's latency, and at the window's end reports
// whether its mean is past the tolerance (and the cut to make) and
// whether the limit may grow. a.mu is held.
func (a *aimd) sense(now, granted time.Time) (calm bool) {
	e := &a.lat
	if e.at.IsZero() {
		e.at, e.leastAt = now, now
	}
	took := min(maxRTT, now.Sub(granted))
	if now.Sub(e.leastAt) >= latencyPeriod*a.window {
		if e.least > 0 {
			e.prev = e.least
		}
		e.least, e.leastAt = took, now
	} else if e.least == 0 || took < e.least {
		e.least = took
	}
	if granted.After(a.down) && e.n < maxSamples {
		e.sum += took
		e.n++
	}
	noLoad := e.least
	if e.prev > 0 && e.prev < noLoad {
		noLoad = e.prev
	}
	noLoad = max(noLoad, time.Millisecond)
	threshold := time.Duration(float64(noLoad) * e.tolerance)
	if now.Sub(e.at) >= a.window {
		if e.n > 0 {
			e.recent = e.sum / time.Duration(e.n)
			if e.recent > threshold && now.Sub(a.down) >= holdWindows*a.window {
				cut := int64(float64(a.limit) * float64(noLoad) / float64(e.recent))
				a.limit = max(a.min, a.limit/2, min(a.limit-1, int64(float64(a.limit)*a.factor), cut))
				a.down = now
			}
		}
		e.sum, e.n, e.at = 0, 0, now
	}
	return e.recent <= threshold
}
