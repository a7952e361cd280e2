package notice

import (
	"reflect"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultLinger is how long a channel stays subscribed after its last
// waiter leaves, unless Registry.SetLinger says otherwise.
const DefaultLinger = 10 * time.Second

// A Registry owns the hubs of the clients its waiters use: one per client,
// made when the first waiter of the client joins, and freed, subscription
// and goroutines with it, once the hub has no channel left, so that the
// Registry keeps no client reachable that no waiter uses.
//
// Waiters share a subscription only if they join through one Registry, so
// a package keeps a single Registry for all its users of a client, in a
// package-level variable. That table has to be keyed by the client, and a
// go-redis client has no place to keep a value of ours; the hubs therefore
// live beside the clients, in the Registry.
//
// A Registry is safe for concurrent use.
type Registry struct {
	mu     sync.Mutex // taken before any hub's mu
	hubs   map[redis.UniversalClient]*hub
	linger time.Duration
}

// NewRegistry returns a Registry with no hub, whose channels linger for
// DefaultLinger.
func NewRegistry() *Registry {
	return &Registry{hubs: map[redis.UniversalClient]*hub{}, linger: DefaultLinger}
}

// SetLinger sets how long the channels of hubs made from now on stay
// subscribed after their last waiter leaves, and returns the previous
// setting. Hubs already made keep theirs.
func (r *Registry) SetLinger(d time.Duration) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.linger
	r.linger = d
	return old
}

// A Site is where the waiters of one user of a client, such as a Limiter,
// join. Sites of one client in one Registry share the client's hub. A
// client whose dynamic type cannot be a map key cannot be looked up, so
// each of its Sites has a hub of its own, which it shares with no other.
//
// A Site is safe for concurrent use.
type Site struct {
	r      *Registry
	client redis.UniversalClient
	own    *hub // nil unless client cannot be a map key
}

// Site returns a Site for client, which must not be nil. It does not
// contact Redis.
func (r *Registry) Site(client redis.UniversalClient) *Site {
	s := &Site{r: r, client: client}
	if !reflect.TypeOf(client).Comparable() {
		r.mu.Lock()
		s.own = r.newHub(client)
		r.mu.Unlock()
	}
	return s
}

// Join adds a waiter for name on channel, subscribing to the channel if
// no waiter of the Registry is subscribed to it, and making the client's
// hub if it has none. The subscription is confirmed asynchronously: until
// it is, Ready reports false and notices may be lost.
//
// parse reads the payload of a message on channel and returns the name
// of the waiters the message is for, or false for a message to ignore.
// Every waiter of a channel must give the same parse: the one given when
// the channel was subscribed is used while it stays subscribed.
//
// The waiter must Leave when done.
func (s *Site) Join(channel, name string, parse func(payload string) (name string, ok bool)) *Waiter {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	h := s.own
	if h == nil {
		h = r.hubs[s.client]
		if h == nil {
			h = r.newHub(s.client)
			h.shared = true
			r.hubs[s.client] = h
		}
	}
	return h.join(channel, name, parse)
}

// newHub returns a hub for client. r.mu is held.
func (r *Registry) newHub(client redis.UniversalClient) *hub {
	h := &hub{r: r, client: client, linger: r.linger, channels: map[string]*channel{}, subs: map[string]*subscription{}}
	switch client.(type) {
	case *redis.ClusterClient:
		h.sharded, h.perChannel = true, true
	case *redis.Ring:
		h.perChannel = true
	}
	return h
}

// forget removes h from r if r holds it. r.mu is held.
func (r *Registry) forget(h *hub) {
	if h.shared && r.hubs[h.client] == h {
		delete(r.hubs, h.client)
	}
}
