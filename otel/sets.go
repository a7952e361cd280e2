package slotlimitotel

import (
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/slotlimit/slotlimit/observe"
)

// maxSets bounds the attribute sets an Observer keeps; past it, they are
// built for each call.
const maxSets = 1024

// outcomeCanceled is the outcome of a call that failed because the
// caller's ctx ended: an observe.Error the caller, not the system, caused.
const outcomeCanceled = "canceled"

// setKey is what an event's attribute sets depend on. key is empty
// without WithKeyAttribute.
type setKey struct {
	pkg, op, key string
	kind         observe.Kind
	held         bool
	errType      string
	canceled     bool // an Error that the caller's ctx caused: outcome "canceled"
}

// measure is one attribute set, as the options of an Add and a Record,
// built once so that recording allocates no option.
type measure struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

func newMeasure(kvs ...attribute.KeyValue) measure {
	opt := metric.WithAttributeSet(attribute.NewSet(kvs...))
	return measure{add: []metric.AddOption{opt}, rec: []metric.RecordOption{opt}}
}

// sets are the attribute sets of the events of one setKey.
type sets struct {
	state measure // package[, key]: units in use, lost leases
	op    measure // package, operation[, key]: refusals, waits, hand-overs
	call  measure // package, operation, outcome[, held][, key]: calls
	err   measure // package, operation, error.type[, key]: errors

	spanName string
	span     []attribute.KeyValue // package, operation, outcome[, held][, error.type]
	canceled bool                 // the outcome is "canceled": no error counted, no error status
}

// build makes the sets of k.
func (o *Observer) build(k setKey) *sets {
	var key []attribute.KeyValue
	if o.withKey {
		key = []attribute.KeyValue{attrKey.String(k.key)}
	}
	with := func(kvs ...attribute.KeyValue) measure {
		all := make([]attribute.KeyValue, 0, len(kvs)+len(key)) // NewSet sorts in place
		return newMeasure(append(append(all, kvs...), key...)...)
	}
	base := []attribute.KeyValue{attrPackage.String(k.pkg)}
	if k.op != "" {
		base = append(base, attrOperation.String(k.op))
	}
	outcome := k.kind.String()
	if k.canceled {
		outcome = outcomeCanceled
	}
	call := append(base[:len(base):len(base)], attrOutcome.String(outcome))
	if k.kind == observe.Released || k.kind == observe.Renewed {
		call = append(call, attrHeld.Bool(k.held))
	}
	s := &sets{
		state:    with(base[0]),
		op:       with(base...),
		call:     with(call...),
		spanName: k.pkg + "." + k.op,
		canceled: k.canceled,
	}
	s.span = call
	if k.kind == observe.Error && !k.canceled {
		s.err = with(append(base[:len(base):len(base)], attrErrorType.String(k.errType))...)
		s.span = append(call[:len(call):len(call)], attrErrorType.String(k.errType))
	}
	return s
}

// setCache keeps the sets built so far, up to maxSets: a map that is
// replaced, never written, so that reading it takes no lock.
type setCache struct {
	m  atomic.Pointer[map[setKey]*sets]
	mu sync.Mutex // held to replace m
}

// get returns the sets of k, built by build if they are not kept yet.
func (c *setCache) get(k setKey, build func(setKey) *sets) *sets {
	if m := c.m.Load(); m != nil {
		if s, ok := (*m)[k]; ok {
			return s
		}
	}
	s := build(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	var old map[setKey]*sets
	if m := c.m.Load(); m != nil {
		old = *m
	}
	if kept, ok := old[k]; ok {
		return kept
	}
	if len(old) >= maxSets {
		return s
	}
	m := make(map[setKey]*sets, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[k] = s
	c.m.Store(&m)
	return s
}

// maxPending bounds the calls whose wait or hand-over is kept for their
// span; pendingTTL is how long one is kept before a newer one may push it
// out. A call's final event follows its Waited and HandedOver at once,
// on the same goroutine (after at most a one-second cleanup when it
// fails), so neither bound is reached unless a final event never comes.
const (
	maxPending = 4096
	pendingTTL = time.Minute
)

// callID names one call: the events of a call share its start, package,
// operation, key and holder.
type callID struct {
	start             int64 // Unix nanoseconds
	pkg, op, key, who string
}

func idOf(e observe.Event) callID {
	return callID{start: e.Start.UnixNano(), pkg: e.Package, op: e.Op, key: e.Key, who: e.Holder}
}

// waits are what a call reported before its final event.
type waits struct {
	waited, handed       time.Duration
	hasWaited, hasHanded bool
	noted                time.Time
}

// pendingCalls keeps the waits of calls whose final event has not come
// yet. A final event looks in it only while it holds something.
type pendingCalls struct {
	n  atomic.Int64 // len(m)
	mu sync.Mutex
	m  map[callID]waits
}

// note keeps a Waited or HandedOver event for its call's span. When
// maxPending calls are kept, it drops those kept longer than pendingTTL,
// and if none is that old, it drops e.
func (p *pendingCalls) note(e observe.Event) {
	id := idOf(e)
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = make(map[callID]waits)
	}
	w, ok := p.m[id]
	if !ok && len(p.m) >= maxPending {
		for id, w := range p.m {
			if now.Sub(w.noted) > pendingTTL {
				delete(p.m, id)
			}
		}
		if len(p.m) >= maxPending {
			return
		}
	}
	w.noted = now
	switch e.Kind {
	case observe.Waited:
		w.waited, w.hasWaited = e.Duration, true
	case observe.HandedOver:
		w.handed, w.hasHanded = e.Duration, true
	}
	p.m[id] = w
	p.n.Store(int64(len(p.m)))
}

// take returns and forgets what was kept for the call e ends.
func (p *pendingCalls) take(e observe.Event) (waits, bool) {
	if p.n.Load() == 0 {
		return waits{}, false
	}
	id := idOf(e)
	p.mu.Lock()
	defer p.mu.Unlock()
	w, ok := p.m[id]
	if ok {
		delete(p.m, id)
		p.n.Store(int64(len(p.m)))
	}
	return w, ok
}

// len returns how many calls are kept.
func (p *pendingCalls) len() int {
	return int(p.n.Load())
}
