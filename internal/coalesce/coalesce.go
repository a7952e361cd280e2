// Package coalesce joins concurrent calls of one kind on one key into
// batches, each sent as one script call.
//
// There is no timer and no goroutine that lives on. A call that finds no
// batch of its key in flight sends at once, alone, on its own goroutine,
// as a single call would; the calls that arrive while it is in flight
// queue up, and when it returns, they go as one batch, up to Group.Max, on
// a goroutine that sends batch after batch while calls are queued, and
// ends when none is, so that each member can return when its own ctx
// ends. So a lone caller pays a lock
// and a map lookup, and a crowd on one key pays one round trip and one
// script run per batch.
package coalesce

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
)

// errShort is the error of a batch whose Send returned a result count
// other than its calls'.
var errShort = errors.New("coalesce: a batch's results do not match its calls")

// DefaultMax is the most calls in a batch when Group.Max is 0.
const DefaultMax = 64

// A Group sends the calls made through Do in batches, one batch in flight
// per key at a time, calls in arrival order.
//
// Its zero value is not usable: Send must be set before the first Do. A
// Group is safe for concurrent use.
type Group[K comparable, Req, Res any] struct {
	// Send sends one batch for key: reqs in arrival order, one or more.
	// It returns one Res per request, in order, or an error for all of
	// them. ctx is the caller's own when the batch has one member;
	// otherwise it carries the first member's values, and no deadline
	// unless every member has one, then the latest.
	Send func(ctx context.Context, key K, reqs []Req) ([]Res, error)

	// Max is the most calls one batch carries (DefaultMax when 0), so that
	// no batch holds the server for long.
	Max int

	// Alone sends every call as a batch of its own, at once, with its own
	// ctx: coalescing turned off.
	Alone bool

	mu    sync.Mutex
	lanes map[K]*lane[Req, Res]
}

// A lane is the state of one key: whether a batch is in flight, and the
// calls queued behind it.
type lane[Req, Res any] struct {
	busy   bool
	queued []*member[Req, Res]
}

// A member is one queued call.
type member[Req, Res any] struct {
	ctx   context.Context
	req   Req
	state state
	ready chan struct{} // closed when state becomes done
	res   Res
	err   error
}

type state uint8

const (
	queued state = iota // waiting in its lane
	sent                // in a batch in flight
	done                // res and err are set
	left                // its ctx ended before it was sent
)

// Do makes the call req on key, alone or in a batch, and returns its own
// result. A call whose ctx ends while it is queued leaves the queue, and
// its error matches ctx.Err() and says that nothing was sent (see
// callerr.Sent); one whose ctx ends while its batch is in flight returns
// at once, with an error that matches ctx.Err() and leaves the outcome
// unknown, and that Unsettled.Note remembers. Errors of Send are returned
// as they are.
func (g *Group[K, Req, Res]) Do(ctx context.Context, key K, req Req) (Res, error) {
	if g.Alone {
		return g.sendAlone(ctx, key, req)
	}
	g.mu.Lock()
	ln := g.lanes[key]
	if ln == nil {
		if g.lanes == nil {
			g.lanes = make(map[K]*lane[Req, Res])
		}
		ln = &lane[Req, Res]{}
		g.lanes[key] = ln
	}
	if !ln.busy {
		ln.busy = true
		g.mu.Unlock()
		res, err := g.sendAlone(ctx, key, req)
		g.mu.Lock()
		g.next(key, ln)
		g.mu.Unlock()
		return res, err
	}
	m := &member[Req, Res]{ctx: ctx, req: req, ready: make(chan struct{})}
	ln.queued = append(ln.queued, m)
	g.mu.Unlock()

	var zero Res
	select {
	case <-m.ready:
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch m.state {
	case queued:
		ln.remove(m)
		m.state = left
		fallthrough
	case left:
		return zero, callerr.Sent(ctx.Err(), false)
	case sent:
		return zero, &inFlightError{err: callerr.Sent(ctx.Err(), true), landed: m.ready}
	}
	return m.res, m.err
}

// An inFlightError is the error of a call whose ctx ended while its batch
// was in flight: landed is closed when the batch has returned.
type inFlightError struct {
	err    error
	landed <-chan struct{}
}

func (e *inFlightError) Error() string { return e.err.Error() }
func (e *inFlightError) Unwrap() error { return e.err }

// Unsettled remembers, by an ID such as a holder's, the calls whose ctx
// ended while their batch was in flight, until their batch has returned,
// so that a later call about the same ID, such as the release that cleans
// up after such a call, reaches Redis after that batch. Its zero value is
// ready to use; it is safe for concurrent use.
type Unsettled struct {
	mu      sync.Mutex
	batches map[string]<-chan struct{} // closed when the batch has returned
}

// Note remembers id's call, when err says that its ctx ended while its
// batch was in flight.
func (u *Unsettled) Note(id string, err error) {
	var inFlight *inFlightError
	if !errors.As(err, &inFlight) {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.batches == nil {
		u.batches = make(map[string]<-chan struct{})
	}
	if len(u.batches) >= 64 {
		// Forget the batches that have returned, so that the IDs whose
		// calls were never followed up do not pile up.
		for other, landed := range u.batches {
			select {
			case <-landed:
				delete(u.batches, other)
			default:
			}
		}
	}
	u.batches[id] = inFlight.landed
}

// Settle waits until the batch of id's call that Note remembers, if any,
// has returned, or ctx ends.
func (u *Unsettled) Settle(ctx context.Context, id string) {
	u.mu.Lock()
	landed, ok := u.batches[id]
	u.mu.Unlock()
	if !ok {
		return
	}
	select {
	case <-landed:
		u.mu.Lock()
		if u.batches[id] == landed {
			delete(u.batches, id)
		}
		u.mu.Unlock()
	case <-ctx.Done():
	}
}

// Queued returns the calls queued on key behind a batch in flight.
func (g *Group[K, Req, Res]) Queued(key K) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ln := g.lanes[key]; ln != nil {
		return len(ln.queued)
	}
	return 0
}

// sendAlone sends req as a batch of one, with the caller's ctx.
func (g *Group[K, Req, Res]) sendAlone(ctx context.Context, key K, req Req) (Res, error) {
	var zero Res
	out, err := g.Send(ctx, key, []Req{req})
	if err != nil {
		return zero, err
	}
	if len(out) != 1 {
		return zero, errShort
	}
	return out[0], nil
}

// take moves the lane's first calls, up to Max, out of its queue and
// marks them sent; calls whose ctx has ended are marked left instead.
// g.mu is held.
func (g *Group[K, Req, Res]) take(ln *lane[Req, Res]) []*member[Req, Res] {
	max := g.Max
	if max <= 0 {
		max = DefaultMax
	}
	n := min(len(ln.queued), max)
	batch := make([]*member[Req, Res], 0, n)
	for _, m := range ln.queued[:n] {
		if m.ctx.Err() != nil {
			m.state = left
			continue
		}
		m.state = sent
		batch = append(batch, m)
	}
	rest := copy(ln.queued, ln.queued[n:])
	clear(ln.queued[rest:])
	ln.queued = ln.queued[:rest]
	return batch
}

// sendBatch sends batch, gives each member its result and wakes it, and
// goes on with the next batch of the lane's queue until the queue is
// empty. g.mu is not held.
func (g *Group[K, Req, Res]) sendBatch(key K, ln *lane[Req, Res], batch []*member[Req, Res]) {
	for {
		reqs := make([]Req, len(batch))
		for i, m := range batch {
			reqs[i] = m.req
		}
		ctx, cancel := batchContext(batch)
		out, err := g.Send(ctx, key, reqs)
		cancel()
		if err == nil && len(out) != len(batch) {
			err = errShort
		}
		g.mu.Lock()
		for i, m := range batch {
			if err != nil {
				m.err = err
			} else {
				m.res = out[i]
			}
			m.state = done
			close(m.ready)
		}
		if batch = g.takeNext(ln); batch == nil {
			g.idle(key, ln)
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
	}
}

// batchContext returns the context a batch is sent with: the first
// member's values, and the latest of the members' deadlines, or none
// when one of them has none, so that no member's deadline cuts another's
// call short.
func batchContext[Req, Res any](batch []*member[Req, Res]) (context.Context, context.CancelFunc) {
	ctx := context.WithoutCancel(batch[0].ctx)
	var latest time.Time
	for _, m := range batch {
		d, ok := m.ctx.Deadline()
		if !ok {
			return ctx, func() {}
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(ctx, latest)
}

// next hands the lane on after a call sent alone: the calls queued behind
// it go as a batch, sent by a goroutine of its own, so that each of them
// can return when its own ctx ends. g.mu is held.
func (g *Group[K, Req, Res]) next(key K, ln *lane[Req, Res]) {
	if batch := g.takeNext(ln); batch != nil {
		go g.sendBatch(key, ln, batch)
		return
	}
	g.idle(key, ln)
}

// takeNext takes the lane's next batch, or nil when no queued call is left
// to send. g.mu is held.
func (g *Group[K, Req, Res]) takeNext(ln *lane[Req, Res]) []*member[Req, Res] {
	for len(ln.queued) > 0 {
		if batch := g.take(ln); len(batch) > 0 {
			return batch
		}
	}
	return nil
}

// idle marks the lane as having nothing in flight. g.mu is held.
func (g *Group[K, Req, Res]) idle(key K, ln *lane[Req, Res]) {
	ln.busy = false
	delete(g.lanes, key)
}

// remove takes m out of the queue. The lane's mutex is held.
func (ln *lane[Req, Res]) remove(m *member[Req, Res]) {
	for i, q := range ln.queued {
		if q == m {
			last := len(ln.queued) - 1
			copy(ln.queued[i:], ln.queued[i+1:])
			ln.queued[last] = nil
			ln.queued = ln.queued[:last]
			return
		}
	}
}
