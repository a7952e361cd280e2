package notice

import "github.com/redis/go-redis/v9"

// Hub is the hub type, for tests to compare and inspect.
type Hub = hub

// HubOf returns the hub r holds for client, or nil.
func (r *Registry) HubOf(client redis.UniversalClient) *Hub {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hubs[client]
}

// Hub returns the hub a join at s would use now, or nil if there is none
// yet.
func (s *Site) Hub() *Hub {
	if s.own != nil {
		return s.own
	}
	return s.r.HubOf(s.client)
}

// Hub returns the hub w joined.
func (w *Waiter) Hub() *Hub { return w.h }

// Live reports whether w's hub is still the one its Registry holds for
// its client, with w's channel in it, so that notices can reach w.
func (w *Waiter) Live() bool {
	h := w.h
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.r.hubs[h.client] == h && h.channels[w.ch.name] == w.ch
}

// Waiting reports whether each named channel of h has n waiters and is
// subscribed.
func (h *Hub) Waiting(n int, channels ...string) bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, name := range channels {
		c := h.channels[name]
		if c == nil || c.count != n || !c.ready {
			return false
		}
	}
	return true
}

// Size returns how many channels and subscriptions h has.
func (h *Hub) Size() (channels, subscriptions int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.channels), len(h.subs)
}
