package notice

import "github.com/redis/go-redis/v9"

// dispatch reads one subscription until it is closed, or until the
// server ends it (see ended).
//
// It reads go-redis's ChannelWithSubscriptions, whose goroutine receives
// from the connection, connects again when it breaks, subscribes again to
// every channel, and pings the connection when idle so that a dead one is
// found. Reading the connection here with Receive would take that
// goroutine off the path of a notice, but gains nothing measurable: in
// BenchmarkWake a bare Receive is no faster than a bare channel, and a hub
// read either way woke its waiter within a microsecond of the other, at
// some 35µs.
func (h *hub) dispatch(s *subscription, ps *redis.PubSub) {
	for msg := range ps.ChannelWithSubscriptions() {
		switch m := msg.(type) {
		case *redis.Subscription:
			switch m.Kind {
			case "subscribe", "ssubscribe":
				h.subscribed(s, ps, m.Channel)
			case "sunsubscribe":
				if h.ended(s, ps, m.Channel) {
					return
				}
			}
		case *redis.Message:
			h.deliver(m.Channel, m.Payload)
		}
	}
}

// deliver gives a notice on the named channel to the waiters of the name
// it names, and wakes those that expect it.
func (h *hub) deliver(channelName, payload string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.channels[channelName]
	if c == nil {
		return
	}
	name, ok := c.parse(payload)
	if !ok {
		return
	}
	for _, w := range c.waiters[name] {
		w.last, w.noticed = payload, true
		if w.match != nil && w.match(payload) {
			w.signal()
		}
	}
}

// subscribed marks a channel ready and wakes all its waiters: notices sent
// before, or while a broken connection was restored, are lost, so each
// waiter must look again.
func (h *hub) subscribed(s *subscription, ps *redis.PubSub, channelName string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.ps != ps {
		return // ps is being replaced
	}
	s.subscribed[channelName] = true
	c := h.channels[channelName]
	if c == nil || c.sub != s {
		return
	}
	c.ready = true
	for _, ws := range c.waiters {
		for _, w := range ws {
			w.signal()
		}
	}
}

// ended handles an SUNSUBSCRIBE that the hub did not send: on a Cluster,
// a node ends the sharded subscriptions of a slot it no longer serves (a
// failover made it a replica, or the slot moved), and its notices go to
// the slot's new master. ended marks the channel not ready, so that its
// waiters look for themselves until a new subscription, opened on the new
// master, is confirmed; and reports whether it replaced ps.
func (h *hub) ended(s *subscription, ps *redis.PubSub, channelName string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.closed || s.ps != ps || !h.perChannel {
		return false
	}
	s.subscribed[channelName] = false
	if c := h.channels[channelName]; c != nil && c.sub == s {
		c.ready = false
		for _, ws := range c.waiters {
			for _, w := range ws {
				w.signal()
			}
		}
	}
	s.ps = nil
	go h.reopen(s, ps, channelName, confirmWithin)
	return true
}
