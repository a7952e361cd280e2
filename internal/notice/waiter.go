package notice

// A Waiter is one goroutine's place on a notice channel, under a name. Its
// methods are safe for concurrent use.
type Waiter struct {
	h    *hub
	ch   *channel
	name string
	wake chan struct{} // holds at most one wake-up

	// Guarded by h.mu.
	match   func(payload string) bool
	last    string // the last notice for name
	noticed bool   // last holds a notice
	left    bool
}

// Wake returns a channel that receives when w should look again: when its
// channel's subscription is confirmed, at first or after a broken
// connection was restored, and when a notice w expects arrives. It holds
// at most one wake-up, so wake-ups that come while w is busy count as
// one.
func (w *Waiter) Wake() <-chan struct{} {
	return w.wake
}

// Ready reports whether w's channel is subscribed, so that notices reach
// w. Until it is, the waiter must look for itself, as notices can be lost.
func (w *Waiter) Ready() bool {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	return w.ch.ready
}

// Last returns the payload of the last notice for w's name since w
// joined, and false if none came.
func (w *Waiter) Last() (payload string, ok bool) {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	return w.last, w.noticed
}

// Expect sets which notices for w's name wake w: those whose payload
// match accepts. A nil match accepts none, as does a new waiter until it
// calls Expect. If the last notice for w's name is one match accepts, w
// is woken at once, since it may have come before w knew to expect it.
//
// match is called with w's hub locked: it must be quick, and must not
// call methods of w or of other waiters.
func (w *Waiter) Expect(match func(payload string) bool) {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	w.match = match
	if match != nil && w.noticed && match(w.last) {
		w.signal()
	}
}

// Leave removes w from its channel, which stays subscribed for the
// Registry's linger in case another waiter joins it. Leaving again does
// nothing.
func (w *Waiter) Leave() {
	w.h.leave(w)
}

// signal wakes w unless a wake-up is already pending.
func (w *Waiter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}
