package slotlimit

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A hubBackend is a server the hub tests run against.
type hubBackend struct {
	opts    redis.UniversalOptions
	real    bool // a redis-server, which lists its pub/sub connections
	cluster bool
}

// eachHubBackend runs test against miniredis, a real Redis and a real
// Redis Cluster.
func eachHubBackend(t *testing.T, test func(t *testing.T, b hubBackend)) {
	t.Run("miniredis", func(t *testing.T) {
		mr := miniredis.RunT(t)
		test(t, hubBackend{opts: redis.UniversalOptions{Addrs: []string{mr.Addr()}}})
	})
	t.Run("redis", func(t *testing.T) {
		test(t, hubBackend{opts: redis.UniversalOptions{Addrs: []string{redistest.Addr(t)}}, real: true})
	})
	t.Run("cluster", func(t *testing.T) {
		test(t, hubBackend{opts: redis.UniversalOptions{Addrs: redistest.ClusterAddrs(t)}, real: true, cluster: true})
	})
}

// newClient returns a client of b's server, closed when t ends. On a real
// server its connections carry a name of their own, so that they can be
// told apart from those of other clients.
func (b hubBackend) newClient(t *testing.T) redis.UniversalClient {
	opts := b.opts
	if b.real {
		opts.ClientName = "slotlimit-hub-test-" + randomHex()
	}
	client := redis.NewUniversalClient(&opts)
	t.Cleanup(func() { client.Close() })
	return client
}

// subscribers returns how many connections subscribe to the notice
// channel name: sharded subscriptions, summed over the nodes, on a cluster.
func (b hubBackend) subscribers(client redis.UniversalClient, name string) (int64, error) {
	ctx := context.Background()
	if !b.cluster {
		n, err := client.PubSubNumSub(ctx, name).Result()
		return n[name], err
	}
	var mu sync.Mutex
	var total int64
	err := client.(*redis.ClusterClient).ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error {
		n, err := node.PubSubShardNumSub(ctx, name).Result()
		mu.Lock()
		total += n[name]
		mu.Unlock()
		return err
	})
	return total, err
}

// pubsubConns returns how many pub/sub connections of client a real server
// has, summed over the nodes of a cluster.
func (b hubBackend) pubsubConns(client redis.UniversalClient) (int, error) {
	ctx := context.Background()
	var name string
	switch c := client.(type) {
	case *redis.Client:
		name = c.Options().ClientName
	case *redis.ClusterClient:
		name = c.Options().ClientName
	}
	count := func(node redis.UniversalClient) (int, error) {
		list, err := node.Do(ctx, "client", "list", "type", "pubsub").Text()
		return strings.Count(list, " name="+name+" "), err
	}
	if !b.cluster {
		return count(client)
	}
	var mu sync.Mutex
	total := 0
	err := client.(*redis.ClusterClient).ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error {
		n, err := count(node)
		mu.Lock()
		total += n
		mu.Unlock()
		return err
	})
	return total, err
}

// released waits until client has no hub, no subscriber on the channels
// and, on a real server, no pub/sub connection, and until no more
// goroutines run than before.
func (b hubBackend) released(t *testing.T, client redis.UniversalClient, before int, channels ...string) {
	t.Helper()
	settle(t, func() error {
		if hubOf(client) != nil {
			return errors.New("the client's hub is still in hubs")
		}
		for _, name := range channels {
			if n, err := b.subscribers(client, name); err != nil || n != 0 {
				return fmt.Errorf("channel %s: %d subscribers (%v)", name, n, err)
			}
		}
		if b.real {
			if n, err := b.pubsubConns(client); err != nil || n != 0 {
				return fmt.Errorf("%d pub/sub connections (%v)", n, err)
			}
		}
		if n := goroutines(); n > before {
			return fmt.Errorf("%d goroutines, %d before:\n%s", n, before, stacks())
		}
		return nil
	})
}

// settle waits up to 10 s for cond to return nil, and fails t with its
// last error if it never does.
func settle(t *testing.T, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hubOf returns the hub hubs holds for client, or nil.
func hubOf(client redis.UniversalClient) *hub {
	hubs.mu.Lock()
	defer hubs.mu.Unlock()
	return hubs.m[client]
}

// hubOfLimiter returns the hub l's waits use now, or nil.
func hubOfLimiter(l *Limiter) *hub {
	if l.ownHub != nil {
		return l.ownHub
	}
	return hubOf(l.client)
}

// waiting reports whether every named channel of h has n waiters,
// subscribed.
func waiting(h *hub, n int, channels ...string) bool {
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

// lingerFor makes the channels of hubs made until t ends linger for d.
func lingerFor(t *testing.T, d time.Duration) {
	hubs.mu.Lock()
	defer hubs.mu.Unlock()
	old := hubs.linger
	hubs.linger = d
	t.Cleanup(func() {
		hubs.mu.Lock()
		defer hubs.mu.Unlock()
		hubs.linger = old
	})
}

// goroutines counts the goroutines of the process but those of an
// in-process miniredis, which serve its connections: on a real server it
// is runtime.NumGoroutine().
func goroutines() int {
	n := 0
	for _, g := range strings.Split(stacks(), "\n\n") {
		if !strings.Contains(g, "github.com/alicebob/miniredis") {
			n++
		}
	}
	return n
}

// stacks returns the stacks of every goroutine.
func stacks() string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// randomHex returns 12 random hex digits, for names no other test uses.
func randomHex() string {
	var buf [6]byte
	rand.Read(buf[:])
	return hex.EncodeToString(buf[:])
}

// newHubLimiter returns a Limiter of one slot on a key of its own, whose
// leases last a minute, so that only a release frees the slot.
func newHubLimiter(t *testing.T, client redis.UniversalClient) *Limiter {
	t.Helper()
	key := "slotlimit-hub-test:" + randomHex()
	t.Cleanup(func() { client.Del(context.Background(), key) })
	l, err := New(client, Config{Key: key, Limit: 1, TTL: time.Minute})
	require.NoError(t, err)
	return l
}

// acquireAsync waits for l's slot for holder in a goroutine, and reports
// the outcome on the channel it returns.
func acquireAsync(ctx context.Context, l *Limiter, holder string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := l.Acquire(ctx, holder)
		done <- err
	}()
	return done
}

// awaitDone waits for an acquireAsync, failing t unless it succeeds
// within d.
func awaitDone(t *testing.T, done <-chan error, d time.Duration, what string) {
	t.Helper()
	select {
	case err := <-done:
		require.NoError(t, err, what)
	case <-time.After(d):
		t.Fatalf("%s: not done within %v", what, d)
	}
}

// handOver has holder "waiter" wait for the slot "holder" holds on l until
// holder releases it, then releases it too. It returns the hub the waiter
// was woken through.
func handOver(ctx context.Context, l *Limiter) (*hub, error) {
	if _, err := l.TryAcquire(ctx, "holder"); err != nil {
		return nil, err
	}
	done := acquireAsync(ctx, l, "waiter")
	var h *hub
	for h = hubOfLimiter(l); !waiting(h, 1, l.channel); h = hubOfLimiter(l) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("waiter not subscribed: %w", err)
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := l.Release(ctx, "holder"); err != nil {
		return nil, err
	}
	select {
	case err := <-done:
		if err != nil {
			return nil, err
		}
	case <-time.After(3 * time.Second):
		return nil, errors.New("waiter not done within 3s of the release")
	}
	_, err := l.Release(ctx, "waiter")
	return h, err
}

// acquireCounter counts the acquire script calls that a client runs.
type acquireCounter struct{ n atomic.Int64 }

func (c *acquireCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *acquireCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (c *acquireCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		args := cmd.Args()
		var sha string
		switch cmd.Name() {
		case "evalsha", "evalsha_ro":
			sha = fmt.Sprint(args[1])
		case "eval", "eval_ro":
			sum := sha1.Sum([]byte(fmt.Sprint(args[1])))
			sha = hex.EncodeToString(sum[:])
		}
		if sha == acquireScript.Hash() && (err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT")) {
			c.n.Add(1)
		}
		return err
	}
}

// Once its last waiter has left and its channels have lingered, a client's
// hub is gone from hubs, its subscription is closed, and its goroutines
// have ended.
func TestHubFreedAfterLastWaiter(t *testing.T) {
	eachHubBackend(t, func(t *testing.T, b hubBackend) {
		lingerFor(t, 50*time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		client := b.newClient(t)
		l := newHubLimiter(t, client)
		_, err := l.Count(ctx) // connects
		require.NoError(t, err)
		before := goroutines()

		_, err = handOver(ctx, l)
		require.NoError(t, err)
		b.released(t, client, before, l.channel)
	})
}

// A client's hub, once freed, is no longer reachable, and neither is the
// client.
func TestHubLetsClientGo(t *testing.T) {
	lingerFor(t, 10*time.Millisecond)
	mr := miniredis.RunT(t)
	client, h := func() (weak.Pointer[redis.Client], weak.Pointer[hub]) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		l, err := New(client, Config{Key: "slotlimit-hub-test:" + randomHex(), Limit: 1, TTL: time.Minute})
		require.NoError(t, err)
		h, err := handOver(ctx, l)
		require.NoError(t, err)
		return weak.Make(client), weak.Make(h)
	}()
	settle(t, func() error {
		runtime.GC()
		if client.Value() != nil || h.Value() != nil {
			return errors.New("the client or its hub is still reachable")
		}
		return nil
	})
}

// A wait that begins after its client's hub was freed gets a hub that
// works, one that every Limiter on the client shares, and a release wakes
// it at once, with no polling.
func TestWaitAfterHubFreed(t *testing.T) {
	eachHubBackend(t, func(t *testing.T, b hubBackend) {
		lingerFor(t, 50*time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		client := b.newClient(t)
		tries := &acquireCounter{}
		client.AddHook(tries)
		old := newHubLimiter(t, client)
		_, err := old.Count(ctx)
		require.NoError(t, err)
		before := goroutines()
		_, err = handOver(ctx, old)
		require.NoError(t, err)
		b.released(t, client, before, old.channel)

		// The Limiter made before the hub was freed and one made after.
		limiters := []*Limiter{old, newHubLimiter(t, client)}
		var done []<-chan error
		for _, l := range limiters {
			_, err := l.TryAcquire(ctx, "holder")
			require.NoError(t, err)
			done = append(done, acquireAsync(ctx, l, "waiter"))
		}
		settle(t, func() error {
			if !waiting(hubOf(client), 1, old.channel, limiters[1].channel) {
				return errors.New("waiters not subscribed in one hub")
			}
			return nil
		})
		if b.real {
			want := 1
			if b.cluster {
				want = 2 // one per channel
			}
			n, err := b.pubsubConns(client)
			require.NoError(t, err)
			assert.Equal(t, want, n, "pub/sub connections")
		}
		asleep := tries.n.Load()
		time.Sleep(500 * time.Millisecond) // polling would try 5 times or more
		assert.LessOrEqual(t, tries.n.Load()-asleep, int64(3), "tries while the slots stayed taken")
		for i, l := range limiters {
			_, err := l.Release(ctx, "holder")
			require.NoError(t, err)
			// The next look would be a second away.
			awaitDone(t, done[i], 500*time.Millisecond, "waiter after the release")
		}
	})
}

// The Limiters of one client share its hub and one subscription: one
// connection on a standalone server, one per channel on a cluster.
func TestHubSharedByLimiters(t *testing.T) {
	eachHubBackend(t, func(t *testing.T, b hubBackend) {
		lingerFor(t, 50*time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		client := b.newClient(t)
		limiters := []*Limiter{newHubLimiter(t, client), newHubLimiter(t, client)}
		var done []<-chan error
		for _, l := range limiters {
			_, err := l.TryAcquire(ctx, "holder")
			require.NoError(t, err)
			done = append(done, acquireAsync(ctx, l, "waiter"))
		}
		settle(t, func() error {
			if !waiting(hubOf(client), 1, limiters[0].channel, limiters[1].channel) {
				return errors.New("waiters not subscribed in one hub")
			}
			return nil
		})
		want := 1
		if b.cluster {
			want = 2
		}
		h := hubOf(client)
		h.mu.Lock()
		assert.Len(t, h.subs, want, "subscriptions")
		h.mu.Unlock()
		for _, l := range limiters {
			n, err := b.subscribers(client, l.channel)
			require.NoError(t, err)
			assert.Equal(t, int64(1), n, "subscribers of %s", l.channel)
		}
		if b.real {
			n, err := b.pubsubConns(client)
			require.NoError(t, err)
			assert.Equal(t, want, n, "pub/sub connections")
		}
		for i, l := range limiters {
			_, err := l.Release(ctx, "holder")
			require.NoError(t, err)
			awaitDone(t, done[i], 500*time.Millisecond, "waiter after the release")
		}
	})
}

// Many waits on many keys, their channels dropped and their hub freed and
// made again between them, leave no goroutine and no subscription behind.
func TestWaitsLeaveNoGoroutines(t *testing.T) {
	eachHubBackend(t, func(t *testing.T, b hubBackend) {
		lingerFor(t, time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		client := b.newClient(t)
		const keys, rounds = 8, 5
		var limiters []*Limiter
		var channels []string
		for range keys {
			l := newHubLimiter(t, client)
			limiters = append(limiters, l)
			channels = append(channels, l.channel)
		}
		_, err := limiters[0].Count(ctx)
		require.NoError(t, err)
		before := goroutines()

		errs := make(chan error, keys)
		for _, l := range limiters {
			go func() {
				var err error
				for i := 0; i < rounds && err == nil; i++ {
					_, err = handOver(ctx, l)
				}
				errs <- err
			}()
		}
		for range keys {
			require.NoError(t, <-errs)
		}
		b.released(t, client, before, channels...)
	})
}

// unhashable is a client that cannot be a map key.
type unhashable struct {
	*redis.Client
	_ []int
}

// A Limiter on a client that cannot be a map key has a hub of its own,
// which wakes its waiters like a shared one, and closes its subscription
// once its channels have lingered.
func TestHubOfUnhashableClient(t *testing.T) {
	for _, b := range []hubBackend{{}, {real: true}} {
		name := "miniredis"
		if b.real {
			name = "redis"
		}
		t.Run(name, func(t *testing.T) {
			if b.real {
				b.opts.Addrs = []string{redistest.Addr(t)}
			} else {
				b.opts.Addrs = []string{miniredis.RunT(t).Addr()}
			}
			lingerFor(t, 50*time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			base := b.newClient(t).(*redis.Client)
			l := newHubLimiter(t, unhashable{Client: base})
			require.NotNil(t, l.ownHub)
			_, err := l.Count(ctx)
			require.NoError(t, err)
			before := goroutines()

			_, err = l.TryAcquire(ctx, "holder")
			require.NoError(t, err)
			done := acquireAsync(ctx, l, "waiter")
			settle(t, func() error {
				if !waiting(l.ownHub, 1, l.channel) {
					return errors.New("waiter not subscribed")
				}
				return nil
			})
			_, err = l.Release(ctx, "holder")
			require.NoError(t, err)
			awaitDone(t, done, 500*time.Millisecond, "waiter after the release")
			_, err = l.Release(ctx, "waiter")
			require.NoError(t, err)

			settle(t, func() error {
				l.ownHub.mu.Lock()
				channels, subs := len(l.ownHub.channels), len(l.ownHub.subs)
				l.ownHub.mu.Unlock()
				if channels != 0 || subs != 0 {
					return fmt.Errorf("%d channels, %d subscriptions", channels, subs)
				}
				if n, err := b.subscribers(base, l.channel); err != nil || n != 0 {
					return fmt.Errorf("%d subscribers (%v)", n, err)
				}
				if b.real {
					if n, err := b.pubsubConns(base); err != nil || n != 0 {
						return fmt.Errorf("%d pub/sub connections (%v)", n, err)
					}
				}
				if n := goroutines(); n > before {
					return fmt.Errorf("%d goroutines, %d before:\n%s", n, before, stacks())
				}
				return nil
			})
		})
	}
}

// A waiter that looks its client's hub up just as the hub is freed gets
// one that is in hubs and holds its channel, so that notices reach it.
func TestHubJoinRacesFree(t *testing.T) {
	lingerFor(t, 0)
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { client.Close() })
	var limiters []*Limiter
	for range 4 {
		l, err := New(client, Config{Key: "slotlimit-hub-test:" + randomHex(), Limit: 1})
		require.NoError(t, err)
		limiters = append(limiters, l)
	}
	_, err := limiters[0].Count(context.Background())
	require.NoError(t, err)
	before := goroutines()

	const workers, joins = 4, 300
	var mu sync.Mutex
	seen := map[*hub]bool{}
	errs := make(chan error, workers)
	for i := range workers {
		l := limiters[i%len(limiters)]
		go func() {
			for range joins {
				h, w := l.join("holder")
				hubs.mu.Lock()
				h.mu.Lock()
				live := hubs.m[client] == h && h.channels[l.channel] == w.ch
				h.mu.Unlock()
				hubs.mu.Unlock()
				mu.Lock()
				seen[h] = true
				mu.Unlock()
				h.leave(w)
				if !live {
					errs <- errors.New("joined a hub that was freed")
					return
				}
				time.Sleep(mrand.N(100 * time.Microsecond)) // now and then, the hub is freed
			}
			errs <- nil
		}()
	}
	for range workers {
		require.NoError(t, <-errs)
	}
	assert.Greater(t, len(seen), 1, "hubs made: the hub was never freed between joins")
	var channels []string
	for _, l := range limiters {
		channels = append(channels, l.channel)
	}
	hubBackend{}.released(t, client, before, channels...)
}
