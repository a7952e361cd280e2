package slotlimit

import (
	"context"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A hub delivers release notices to the waiters of one client. Every
// Limiter on the client shares it, so a process holds one subscription
// for all its waiters, not one per waiter: a single one on a standalone
// server, and one per notice channel on Redis Cluster or a Ring, where a
// channel lives on the node of its key.
type hub struct {
	client     redis.UniversalClient
	sharded    bool // SSUBSCRIBE (Cluster) rather than SUBSCRIBE
	perChannel bool // one subscription per channel (Cluster, Ring)

	mu       sync.Mutex
	channels map[string]*channel
	subs     map[string]*subscription // by channel when perChannel, else ""
}

// A channel is one notice channel and its waiters, in arrival order.
type channel struct {
	name    string
	sub     *subscription
	ready   bool // the server confirmed the subscription
	waiters []*waiter
	idle    *time.Timer // drops the channel once it has had no waiter for a while
}

// A subscription is one pub/sub connection.
type subscription struct {
	key      string
	ps       *redis.PubSub
	channels int
}

// A waiter is one AcquireN call waiting for units.
type waiter struct {
	ch   *channel
	n    int64
	wake chan struct{} // a notice that units may be free; holds at most one
}

// channelLinger is how long a channel stays subscribed without waiters, so
// that bursts of waiting do not subscribe and unsubscribe each time.
const channelLinger = 10 * time.Second

var hubs sync.Map // redis.UniversalClient -> *hub

// hubFor returns the hub shared by every Limiter on client.
func hubFor(client redis.UniversalClient) *hub {
	h := &hub{client: client, channels: map[string]*channel{}, subs: map[string]*subscription{}}
	switch client.(type) {
	case *redis.ClusterClient:
		h.sharded, h.perChannel = true, true
	case *redis.Ring:
		h.perChannel = true
	}
	if !reflect.TypeOf(client).Comparable() {
		return h // cannot be a map key: this Limiter gets a hub of its own
	}
	shared, _ := hubs.LoadOrStore(client, h)
	return shared.(*hub)
}

// join adds a waiter for n units on the named channel, subscribing to it
// if no waiter of this process is subscribed yet. The subscription is
// confirmed asynchronously; until it is, the waiter polls (see ready).
func (h *hub) join(name string, n int64) *waiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.channels[name]
	if c == nil {
		c = &channel{name: name}
		h.channels[name] = c
		h.subscribe(c)
	}
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
	w := &waiter{ch: c, n: n, wake: make(chan struct{}, 1)}
	c.waiters = append(c.waiters, w)
	return w
}

// leave removes w. A notice w received but did not need goes to the next
// waiter.
func (h *hub) leave(w *waiter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := w.ch
	for i, x := range c.waiters {
		if x == w {
			c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
			break
		}
	}
	select {
	case <-w.wake:
		h.wakeLocked(c, w.n)
	default:
	}
	if len(c.waiters) == 0 && c.idle == nil {
		c.idle = time.AfterFunc(channelLinger, func() { h.drop(c) })
	}
}

// ready reports whether w's channel is subscribed, so that notices reach it.
func (h *hub) ready(w *waiter) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return w.ch.ready
}

// subscribe starts subscribing c. h.mu is held.
func (h *hub) subscribe(c *channel) {
	key := ""
	if h.perChannel {
		key = c.name
	}
	s := h.subs[key]
	if s == nil {
		s = &subscription{key: key}
		if h.sharded {
			s.ps = h.client.SSubscribe(context.Background())
		} else {
			s.ps = h.client.Subscribe(context.Background())
		}
		h.subs[key] = s
		go h.dispatch(s.ps)
	}
	s.channels++
	c.sub = s
	go func() {
		// A failure leaves c not ready, and its waiters poll.
		if h.sharded {
			s.ps.SSubscribe(context.Background(), c.name) //nolint:errcheck
		} else {
			s.ps.Subscribe(context.Background(), c.name) //nolint:errcheck
		}
	}()
}

// drop unsubscribes c if it still has no waiters.
func (h *hub) drop(c *channel) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(c.waiters) > 0 || h.channels[c.name] != c {
		return
	}
	delete(h.channels, c.name)
	s := c.sub
	s.channels--
	if s.channels == 0 {
		delete(h.subs, s.key)
		go s.ps.Close()
		return
	}
	go func() {
		if h.sharded {
			s.ps.SUnsubscribe(context.Background(), c.name) //nolint:errcheck
		} else {
			s.ps.Unsubscribe(context.Background(), c.name) //nolint:errcheck
		}
	}()
}

// dispatch reads one subscription until it is closed.
func (h *hub) dispatch(ps *redis.PubSub) {
	for msg := range ps.ChannelWithSubscriptions() {
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" || m.Kind == "ssubscribe" {
				h.subscribed(m.Channel)
			}
		case *redis.Message:
			units, _ := strconv.ParseInt(m.Payload, 10, 64)
			h.mu.Lock()
			if c := h.channels[m.Channel]; c != nil {
				h.wakeLocked(c, units)
			}
			h.mu.Unlock()
		}
	}
}

// subscribed marks a channel ready and wakes all its waiters: notices sent
// before, or while a broken connection was restored, are lost, so each
// waiter must look again.
func (h *hub) subscribed(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.channels[name]
	if c == nil {
		return
	}
	c.ready = true
	for _, w := range c.waiters {
		w.signal()
	}
}

// wakeLocked wakes waiters of c, in arrival order, whose units fit in the
// units freed; at least one, so that a notice is never wasted. A waiter
// already woken counts against the units too. h.mu is held.
func (h *hub) wakeLocked(c *channel, units int64) {
	woke := false
	for _, w := range c.waiters {
		if units <= 0 && woke {
			return
		}
		if w.n <= units || !woke {
			w.signal()
			units -= w.n
			woke = true
		}
	}
}

func (w *waiter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}
