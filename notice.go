package slotlimit

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A hub delivers release notices to the waiters of one client. Every
// Limiter on the client shares it, so a process holds one subscription
// for all its waiters, not one per waiter: a single one on a standalone
// server, and one per notice channel on Redis Cluster or a Ring, where a
// channel lives on the node of its key.
//
// A notice names a holder that a release handed units to (see
// scripts/release.lua); it wakes that holder's waiters and no others.
//
// A hub lives only while it has channels. When the last one is dropped,
// its subscription is closed and the hub leaves hubs, so that neither the
// hub nor its client stays reachable once no waiter needs them; the next
// wait on the client makes a new hub. Waiters find the hub with
// Limiter.join, which looks it up and joins it under hubs.mu, and drop
// holds hubs.mu too, so a waiter never joins a hub that is being freed.
type hub struct {
	client     redis.UniversalClient
	shared     bool          // in hubs
	sharded    bool          // SSUBSCRIBE (Cluster) rather than SUBSCRIBE
	perChannel bool          // one subscription per channel (Cluster, Ring)
	linger     time.Duration // hubs.linger when the hub was made

	mu       sync.Mutex
	channels map[string]*channel
	subs     map[string]*subscription // by channel when perChannel, else ""
}

// A channel is one notice channel and its waiters.
type channel struct {
	name    string
	sub     *subscription
	ready   bool // the server confirmed the subscription
	waiters map[string][]*waiter
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

// A waiter is one AcquireN call waiting for units. Its fields below wake
// are guarded by hub.mu.
type waiter struct {
	ch     *channel
	holder string
	wake   chan struct{} // holds at most one wake-up

	arrival int64     // the waiter's queue entry, from its last try; 0: none
	trusted time.Time // until when a notice for that entry can be trusted

	// The last notice for the waiter's holder: the queue entry it served
	// and the lease. It may come before the try that names the entry.
	handedTo int64
	handed   Result
}

// trustNotices is how long after a try is sent a notice for the queue
// entry it returned is trusted: the lease it hands over lasts the claim
// time, queueTTL, from a moment after that send, so a waiter that reads
// the notice well within it returns at once and its claim, sent then,
// finds the lease live. A later notice is checked with a try.
const trustNotices = queueTTL - time.Second

// hubs holds the shared hub of each client whose waiters have a channel
// subscribed or lingering. hubs.mu is taken before any hub's mu.
var hubs = struct {
	mu sync.Mutex
	m  map[redis.UniversalClient]*hub
	// linger is how long a channel stays subscribed without waiters, so
	// that bursts of waiting do not subscribe and unsubscribe each time. A
	// hub reads it when it is made.
	linger time.Duration
}{m: map[redis.UniversalClient]*hub{}, linger: 10 * time.Second}

// newHub returns a hub for client. hubs.mu is held.
func newHub(client redis.UniversalClient) *hub {
	h := &hub{client: client, linger: hubs.linger, channels: map[string]*channel{}, subs: map[string]*subscription{}}
	switch client.(type) {
	case *redis.ClusterClient:
		h.sharded, h.perChannel = true, true
	case *redis.Ring:
		h.perChannel = true
	}
	return h
}

// ownHub returns a hub for a Limiter on client to keep, if client cannot
// be a map key, and nil if the Limiter can share the client's hub in hubs.
// A Limiter with a hub of its own does not share its subscription.
func ownHub(client redis.UniversalClient) *hub {
	if reflect.TypeOf(client).Comparable() {
		return nil
	}
	hubs.mu.Lock()
	defer hubs.mu.Unlock()
	return newHub(client)
}

// join adds a waiter for holder on l's notice channel to the hub of l's
// client, making the hub if the client has none, and returns both. The
// waiter must leave the hub it was given.
func (l *Limiter) join(holder string) (*hub, *waiter) {
	hubs.mu.Lock()
	defer hubs.mu.Unlock()
	h := l.ownHub
	if h == nil {
		h = hubs.m[l.client]
		if h == nil {
			h = newHub(l.client)
			h.shared = true
			hubs.m[l.client] = h
		}
	}
	return h, h.join(l.channel, holder)
}

// join adds a waiter for holder on the named channel, subscribing to it if
// no waiter of this process is subscribed yet. The subscription is
// confirmed asynchronously; until it is, the waiter polls (see ready).
func (h *hub) join(name, holder string) *waiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.channels[name]
	if c == nil {
		c = &channel{name: name, waiters: map[string][]*waiter{}}
		h.channels[name] = c
		h.subscribe(c)
	}
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
	w := &waiter{ch: c, holder: holder, wake: make(chan struct{}, 1)}
	c.waiters[holder] = append(c.waiters[holder], w)
	c.count++
	return w
}

// leave removes w.
func (h *hub) leave(w *waiter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := w.ch
	ws := c.waiters[w.holder]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i], ws[i+1:]...)
			c.count--
			break
		}
	}
	if len(ws) == 0 {
		delete(c.waiters, w.holder)
	} else {
		c.waiters[w.holder] = ws
	}
	if c.count == 0 && c.idle == nil {
		c.idle = time.AfterFunc(h.linger, func() { h.drop(c) })
	}
}

// ready reports whether w's channel is subscribed, so that notices reach it.
func (h *hub) ready(w *waiter) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return w.ch.ready
}

// queued records the queue entry w's last try, sent at sent, returned.
func (h *hub) queued(w *waiter, arrival int64, sent time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w.arrival, w.trusted = arrival, sent.Add(trustNotices)
	if arrival != 0 && w.handedTo == arrival {
		w.signal() // the notice came first
	}
}

// handedLease returns the lease a release handed w's queue entry, if one
// did and the notice can still be trusted.
func (h *hub) handedLease(w *waiter) (Result, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return w.handed, w.arrival != 0 && w.handedTo == w.arrival && time.Now().Before(w.trusted)
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
		go h.open(s, c.name)
		return
	}
	// The channel is recorded even if the write fails, and go-redis
	// subscribes it again when it reconnects.
	go s.ps.Subscribe(context.Background(), c.name) //nolint:errcheck
}

// open opens a per-channel subscription and reads it.
func (h *hub) open(s *subscription, name string) {
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
	h.dispatch(s, ps)
}

// drop forgets c if it still has no waiters, and closes a subscription
// left with no channel in use. A shared hub left with no channel leaves
// hubs.
func (h *hub) drop(c *channel) {
	hubs.mu.Lock()
	defer hubs.mu.Unlock()
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
	if h.shared && len(h.channels) == 0 && len(h.subs) == 0 && hubs.m[h.client] == h {
		delete(hubs.m, h.client)
	}
}

// dispatch reads one subscription until it is closed.
func (h *hub) dispatch(s *subscription, ps *redis.PubSub) {
	for msg := range ps.ChannelWithSubscriptions() {
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" || m.Kind == "ssubscribe" {
				h.subscribed(s, m.Channel)
			}
		case *redis.Message:
			if holder, arrival, res, ok := parseHanded(m.Payload); ok {
				h.hand(m.Channel, holder, arrival, res)
			}
		}
	}
}

// parseHanded reads a notice '+deadline ms:units in use:arrival number:holder',
// where the deadline is the one the waiter claims the lease for.
func parseHanded(payload string) (holder string, arrival int64, res Result, ok bool) {
	rest, ok := strings.CutPrefix(payload, "+")
	var fields [3]int64
	for i := range fields {
		var field string
		var found bool
		field, rest, found = strings.Cut(rest, ":")
		n, err := strconv.ParseInt(field, 10, 64)
		ok = ok && found && err == nil
		fields[i] = n
	}
	if !ok {
		return "", 0, Result{}, false
	}
	return rest, fields[2], Result{Acquired: true, Count: fields[1], ExpiresAt: time.UnixMilli(fields[0])}, true
}

// hand tells the waiters of holder that a release handed units to its
// queue entry arrival, and wakes those that wait on that entry.
func (h *hub) hand(name, holder string, arrival int64, res Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.channels[name]; c != nil {
		for _, w := range c.waiters[holder] {
			w.handedTo, w.handed = arrival, res
			if w.arrival == arrival {
				w.signal()
			}
		}
	}
}

// subscribed marks a channel ready and wakes all its waiters: notices sent
// before, or while a broken connection was restored, are lost, so each
// waiter must look again.
func (h *hub) subscribed(s *subscription, name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.subscribed[name] = true
	c := h.channels[name]
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

func (w *waiter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}
