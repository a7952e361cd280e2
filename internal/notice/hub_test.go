package notice_test

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/notice"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// newRegistry returns a Registry whose channels linger for d.
func newRegistry(d time.Duration) *notice.Registry {
	r := notice.NewRegistry()
	r.SetLinger(d)
	return r
}

// warmUp connects client to the node of each channel, so that the
// goroutines and connections counted before a test are those it keeps.
func warmUp(t *testing.T, ctx context.Context, client redis.UniversalClient, channels ...string) {
	t.Helper()
	for _, name := range channels {
		require.NoError(t, publish(ctx, client, name, "warm-up"))
	}
}

// Once its last waiter has left and its channels have lingered, a client's
// hub is gone from the Registry, its subscription is closed, and its
// goroutines have ended.
func TestHubFreedAfterLastWaiter(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r := newRegistry(50 * time.Millisecond)
		client := b.newClient(t)
		channel := newChannel()
		warmUp(t, ctx, client, channel)
		before := goroutines()

		_, err := roundTrip(ctx, client, r.Site(client), channel)
		require.NoError(t, err)
		b.released(t, r, client, before, channel)
	})
}

// A client's hub, once freed, is no longer reachable, and neither is the
// client.
func TestHubLetsClientGo(t *testing.T) {
	mr := miniredis.RunT(t)
	r := newRegistry(10 * time.Millisecond)
	client, h := func() (weak.Pointer[redis.Client], weak.Pointer[notice.Hub]) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		h, err := roundTrip(ctx, client, r.Site(client), newChannel())
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

// shareOneHub has a waiter join each channel at the matching Site, and
// checks that they share one hub and one subscription (one per channel on
// a cluster), and that a notice wakes each at once.
func shareOneHub(t *testing.T, ctx context.Context, b backend, client redis.UniversalClient, sites []*notice.Site, channels []string) {
	t.Helper()
	var waiters []*notice.Waiter
	for i, s := range sites {
		w, err := joinReady(ctx, s, channels[i], "waiter")
		require.NoError(t, err)
		defer w.Leave()
		waiters = append(waiters, w)
	}
	h := sites[0].Hub()
	require.True(t, h.Waiting(1, channels...), "waiters subscribed in one hub")
	for _, s := range sites {
		require.Same(t, h, s.Hub(), "one hub")
	}
	want := 1
	if b.cluster {
		want = len(channels) // one per channel
	}
	_, subs := h.Size()
	assert.Equal(t, want, subs, "subscriptions")
	for _, name := range channels {
		n, err := b.subscribers(client, name)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "subscribers of %s", name)
	}
	if b.real {
		ids, err := pubsubConns(client)
		require.NoError(t, err)
		assert.Len(t, ids, want, "pub/sub connections")
	}
	for i, w := range waiters {
		require.NoError(t, publish(ctx, client, channels[i], "waiter:1"))
		require.NoError(t, awaitWake(w, 500*time.Millisecond), "waiter on %s", channels[i])
	}
}

// A wait that begins after its client's hub was freed gets a hub that
// works, one that every Site of the client shares, made before the hub
// was freed or after, and a notice wakes it at once: it is ready, so it
// need not poll.
func TestWaitAfterHubFreed(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r := newRegistry(50 * time.Millisecond)
		client := b.newClient(t)
		channels := []string{newChannel(), newChannel()}
		warmUp(t, ctx, client, channels...)
		old := r.Site(client)
		before := goroutines()
		_, err := roundTrip(ctx, client, old, channels[0])
		require.NoError(t, err)
		b.released(t, r, client, before, channels[0])

		shareOneHub(t, ctx, b, client, []*notice.Site{old, r.Site(client)}, channels)
	})
}

// The Sites of one client share its hub and one subscription: one
// connection on a standalone server, one per channel on a cluster.
func TestHubSharedBySites(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r := newRegistry(50 * time.Millisecond)
		client := b.newClient(t)
		shareOneHub(t, ctx, b, client, []*notice.Site{r.Site(client), r.Site(client)}, []string{newChannel(), newChannel()})
	})
}

// Many waits on many channels, their channels dropped and their hub freed
// and made again between them, leave no goroutine and no subscription
// behind.
func TestWaitsLeaveNoGoroutines(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		r := newRegistry(time.Millisecond)
		client := b.newClient(t)
		const channels, rounds = 8, 5
		var names []string
		for range channels {
			names = append(names, newChannel())
		}
		warmUp(t, ctx, client, names...)
		before := goroutines()

		errs := make(chan error, channels)
		for _, name := range names {
			go func() {
				s := r.Site(client)
				var err error
				for i := 0; i < rounds && err == nil; i++ {
					_, err = roundTrip(ctx, client, s, name)
				}
				errs <- err
			}()
		}
		for range channels {
			require.NoError(t, <-errs)
		}
		b.released(t, r, client, before, names...)
	})
}

// unhashable is a client that cannot be a map key.
type unhashable struct {
	*redis.Client
	_ []int
}

// A Site on a client that cannot be a map key has a hub of its own, which
// wakes its waiters like a shared one, and closes its subscription once
// its channels have lingered.
func TestHubOfUnhashableClient(t *testing.T) {
	test := func(t *testing.T, b backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r := newRegistry(50 * time.Millisecond)
		base := b.newClient(t).(*redis.Client)
		client := unhashable{Client: base}
		s := r.Site(client)
		h := s.Hub()
		require.NotNil(t, h, "a hub of its own")
		assert.NotSame(t, h, r.Site(client).Hub(), "shared with no other Site")
		channel := newChannel()
		warmUp(t, ctx, base, channel)
		before := goroutines()

		got, err := roundTrip(ctx, base, s, channel)
		require.NoError(t, err)
		assert.Same(t, h, got)
		settle(t, func() error {
			if channels, subs := h.Size(); channels != 0 || subs != 0 {
				return fmt.Errorf("%d channels, %d subscriptions", channels, subs)
			}
			return b.unsubscribed(base, before, channel)
		})
	}
	t.Run("miniredis", func(t *testing.T) {
		test(t, backend{opts: redis.UniversalOptions{Addrs: []string{miniredis.RunT(t).Addr()}}})
	})
	t.Run("redis", func(t *testing.T) {
		test(t, backend{opts: redis.UniversalOptions{Addrs: []string{redistest.Addr(t)}}, real: true})
	})
}

// A waiter that looks its client's hub up just as the hub is freed gets
// one that is in the Registry and holds its channel, so that notices
// reach it.
func TestHubJoinRacesFree(t *testing.T) {
	r := newRegistry(0)
	client := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	t.Cleanup(func() { client.Close() })
	var channels []string
	for range 4 {
		channels = append(channels, newChannel())
	}
	require.NoError(t, client.Ping(context.Background()).Err())
	before := goroutines()

	const workers, joins = 4, 300
	var mu sync.Mutex
	seen := map[*notice.Hub]bool{}
	errs := make(chan error, workers)
	for i := range workers {
		s, channel := r.Site(client), channels[i%len(channels)]
		go func() {
			for range joins {
				w := s.Join(channel, "holder", parse)
				live := w.Live()
				mu.Lock()
				seen[w.Hub()] = true
				mu.Unlock()
				w.Leave()
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
	backend{}.released(t, r, client, before, channels...)
}
