// Package observetest records the events a primitive reports, for tests.
package observetest

import (
	"context"
	"sync"

	"github.com/slotlimit/slotlimit/internal/observe"
)

// A Recorder is an observe.Observer that keeps every event, in order.
type Recorder struct {
	mu     sync.Mutex
	events []observe.Event
}

// Observe records e.
func (r *Recorder) Observe(_ context.Context, e observe.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// Take returns the events recorded since the last Take, and forgets them.
func (r *Recorder) Take() []observe.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	events := r.events
	r.events = nil
	return events
}

// Kinds returns the kinds of events, in order.
func Kinds(events []observe.Event) []observe.Kind {
	kinds := make([]observe.Kind, len(events))
	for i, e := range events {
		kinds[i] = e.Kind
	}
	return kinds
}
