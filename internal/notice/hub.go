package notice

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A hub delivers the notices of one client's channels to the waiters of a
// Registry (or of a Site, for a client that cannot be a map key).
//
// A hub lives only while it has channels. When the last one is dropped,
// its subscription is closed and the hub leaves its Registry, so that
// neither the hub nor its client stays reachable once no waiter needs
// them; the next join on the client makes a new hub. Site.Join looks the
// hub up and joins it under the Registry's mu, and drop holds that mu too,
// so a waiter never joins a hub that is being freed.
type hub struct {
	r          *Registry
	client     redis.UniversalClient
	shared     bool          // in r.hubs
	sharded    bool          // SSUBSCRIBE (Cluster) rather than SUBSCRIBE
	perChannel bool          // one subscription per channel (Cluster, Ring)
	linger     time.Duration // r.linger when the hub was made

	mu       sync.Mutex
	channels map[string]*channel
	subs     map[string]*subscription // by channel when perChannel, else ""
}

// A channel is one notice channel and its waiters, by name.
type channel struct {
	name    string
	parse   func(payload string) (name string, ok bool)
	sub     *subscription
	ready   bool // the server confirmed the subscription
	waiters map[string][]*Waiter
	count   int
	idle    *time.Timer // drops the channel once it has had no waiter for a while
}

// A subscription is one pub/sub connection. Its fields are guarded by
// hub.mu.
type subscription struct {
	key        string
	ps         *redis.PubSub   // nil until opened
	subscribed map[string]bool // channels the server confirmed
	closed     bool
}

// join adds a waiter for name on the named channel, subscribing to it if
// it is not subscribed yet.
func (h *hub) join(channelName, name string, parse func(string) (string, bool)) *Waiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.channels[channelName]
	if c == nil {
		c = &channel{name: channelName, parse: parse, waiters: map[string][]*Waiter{}}
		h.channels[channelName] = c
		h.subscribe(c)
	}
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
	w := &Waiter{h: h, ch: c, name: name, wake: make(chan struct{}, 1)}
	c.waiters[name] = append(c.waiters[name], w)
	c.count++
	return w
}

// leave removes w, if it has not left yet, and starts its channel's
// linger when w was its last waiter.
func (h *hub) leave(w *Waiter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w.left {
		return
	}
	w.left = true
	c := w.ch
	ws := c.waiters[w.name]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i], ws[i+1:]...)
			c.count--
			break
		}
	}
	if len(ws) == 0 {
		delete(c.waiters, w.name)
	} else {
		c.waiters[w.name] = ws
	}
	if c.count == 0 && c.idle == nil {
		c.idle = time.AfterFunc(h.linger, func() { h.drop(c) })
	}
}

// subscribe starts subscribing c. h.mu is held. A standalone server has
// one subscription for every channel, opened at once (go-redis connects
// lazily); on Cluster and Ring each channel has its own, opened with the
// channel so that it connects to the channel's node. Channels stay
// subscribed while their subscription is open, so that joining and
// leaving never race a SUBSCRIBE against an UNSUBSCRIBE; notices for a
// channel without waiters are ignored.
func (h *hub) subscribe(c *channel) {
	key := ""
	if h.perChannel {
		key = c.name
	}
	s := h.subs[key]
	if s == nil {
		s = &subscription{key: key, subscribed: map[string]bool{}}
		h.subs[key] = s
		if !h.perChannel {
			s.ps = h.client.Subscribe(context.Background())
			go h.dispatch(s, s.ps)
		}
	}
	c.sub = s
	if s.subscribed[c.name] {
		c.ready = true
		return
	}
	if h.perChannel {
		go h.open(s, c.name, confirmWithin)
		return
	}
	// The channel is recorded even if the write fails, and go-redis
	// subscribes it again when it reconnects.
	go s.ps.Subscribe(context.Background(), c.name) //nolint:errcheck
}

// confirmWithin is how long a per-channel subscription may go
// unconfirmed before it is opened again; each time it is, the wait
// doubles, up to confirmWithinAtMost.
const (
	confirmWithin       = time.Second
	confirmWithinAtMost = 16 * time.Second
)

// open opens a per-channel subscription and reads it. If the server has
// not confirmed it within patience, it is opened again (see
// unconfirmed).
func (h *hub) open(s *subscription, name string, patience time.Duration) {
	var ps *redis.PubSub
	if h.sharded {
		ps = h.client.SSubscribe(context.Background(), name)
	} else {
		ps = h.client.Subscribe(context.Background(), name)
	}
	h.mu.Lock()
	closed := s.closed
	s.ps = ps
	h.mu.Unlock()
	if closed {
		ps.Close()
		return
	}
	time.AfterFunc(patience, func() { h.unconfirmed(s, ps, name, patience) })
	h.dispatch(s, ps)
}

// unconfirmed opens s again if ps is still its connection and the server
// has not confirmed name on it. A Cluster client whose slot map is stale
// sends SSUBSCRIBE to a node that no longer serves the channel's slot;
// that node answers MOVED, which go-redis's pub/sub neither follows nor
// reports, and the connection would stay open, hearing nothing.
func (h *hub) unconfirmed(s *subscription, ps *redis.PubSub, name string, patience time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.closed || s.ps != ps || s.subscribed[name] {
		return
	}
	s.ps = nil
	go h.reopen(s, ps, name, min(2*patience, confirmWithinAtMost))
}

// reopen closes ps and opens s again, where the client's slot map, read
// afresh, says name's slot is served now. s.ps is nil, so that
// confirmations and ends that ps still reports are ignored.
func (h *hub) reopen(s *subscription, ps *redis.PubSub, name string, patience time.Duration) {
	ps.Close()
	if cluster, ok := h.client.(*redis.ClusterClient); ok {
		// ForEachShard reloads the slots first.
		_ = cluster.ForEachShard(context.Background(), func(context.Context, *redis.Client) error { return nil })
	}
	h.open(s, name, patience)
}

// drop forgets c if it still has no waiters, and closes a subscription
// left with no channel in use. A shared hub left with no channel leaves
// its Registry.
func (h *hub) drop(c *channel) {
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.count > 0 || h.channels[c.name] != c {
		return
	}
	delete(h.channels, c.name)
	s := c.sub
	for _, other := range h.channels {
		if other.sub == s {
			return
		}
	}
	delete(h.subs, s.key)
	s.closed = true
	if s.ps != nil {
		go s.ps.Close()
	}
	if len(h.channels) == 0 && len(h.subs) == 0 {
		h.r.forget(h)
	}
}
