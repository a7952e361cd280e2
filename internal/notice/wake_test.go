package notice_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/notice"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A notice wakes only the waiters of the name it names, on its own
// channel, and each of them keeps it; a message parse rejects reaches no
// one.
func TestNoticeWakesOnlyNamedWaiters(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		client := b.newClient(t)
		s := notice.NewRegistry().Site(client)
		channel, other := newChannel(), newChannel()
		join := func(channel, name string) *notice.Waiter {
			w, err := joinReady(ctx, s, channel, name)
			require.NoError(t, err)
			t.Cleanup(w.Leave)
			return w
		}
		a, b1, b2, elsewhere := join(channel, "a"), join(channel, "b"), join(channel, "b"), join(other, "b")

		require.NoError(t, publish(ctx, client, channel, "no name"))
		require.NoError(t, publish(ctx, client, channel, "b:1"))
		for _, w := range []*notice.Waiter{b1, b2} {
			require.NoError(t, awaitWake(w, time.Second))
			last, ok := w.Last()
			assert.True(t, ok)
			assert.Equal(t, "b:1", last)
		}
		// Notices on one subscription arrive in order: once a has its
		// own, it has missed none meant for it.
		require.NoError(t, publish(ctx, client, channel, "a:2"))
		require.NoError(t, awaitWake(a, time.Second))
		last, _ := a.Last()
		assert.Equal(t, "a:2", last)
		assert.False(t, woken(a), "a woken twice")
		assert.False(t, woken(elsewhere), "a waiter on another channel")
		_, ok := elsewhere.Last()
		assert.False(t, ok, "a waiter on another channel has a notice")
	})
}

// A new waiter expects no notice; Expect sets which notices wake it,
// and wakes it at once when the last one already qualifies; the wake
// channel holds one wake-up however many notices come.
func TestExpectChoosesTheNoticesThatWake(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	t.Cleanup(func() { client.Close() })
	s := notice.NewRegistry().Site(client)
	channel := newChannel()
	settled, err := joinReady(ctx, s, channel, "other")
	require.NoError(t, err)
	defer settled.Leave()
	w := s.Join(channel, "w", parse)
	defer w.Leave()
	require.True(t, w.Ready(), "the channel was subscribed already")
	only := func(payload string) func(string) bool {
		return func(p string) bool { return p == payload }
	}

	steps := []struct {
		name    string
		publish string            // a notice to send first, if not empty
		expect  func(string) bool // set after, unless keep
		keep    bool
		woken   bool
	}{
		{name: "new waiter", publish: "w:1", keep: true, woken: false},
		{name: "expects the last notice", expect: only("w:1"), woken: true},
		{name: "expects another", expect: only("w:2"), woken: false},
		{name: "the expected notice", publish: "w:2", keep: true, woken: true},
		{name: "an unexpected notice", publish: "w:3", keep: true, woken: false},
		{name: "expects none", expect: nil, woken: false},
		{name: "expecting none", publish: "w:2", keep: true, woken: false},
		{name: "two notices, one wake-up", publish: "w:4", expect: everyNotice, woken: true},
	}
	for i, step := range steps {
		if step.publish != "" {
			require.NoError(t, publish(ctx, client, channel, step.publish))
			require.NoError(t, arrived(ctx, w, step.publish), "step %d", i)
		}
		if !step.keep {
			w.Expect(step.expect)
		}
		assert.Equal(t, step.woken, woken(w), "step %d: %s", i, step.name)
	}
	require.NoError(t, publish(ctx, client, channel, "w:5"))
	require.NoError(t, publish(ctx, client, channel, "w:6"))
	require.NoError(t, arrived(ctx, w, "w:6"))
	assert.True(t, woken(w))
	assert.False(t, woken(w), "a second wake-up")
	w.Leave()
	w.Leave() // leaving again does nothing
}

// A waiter is ready once its channel's subscription is confirmed, and
// that confirmation wakes it; a waiter joining a subscribed channel, or
// one still lingering after its last waiter left, is ready at once.
func TestReadyOnceSubscribed(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		client := b.newClient(t)
		r := newRegistry(time.Minute)
		s := r.Site(client)
		channel := newChannel()
		first := s.Join(channel, "first", parse)
		require.NoError(t, awaitWake(first, 5*time.Second), "the confirmation")
		assert.True(t, first.Ready())

		second := s.Join(channel, "second", parse)
		assert.True(t, second.Ready())
		assert.False(t, woken(second))
		first.Leave()
		second.Leave()

		again := s.Join(channel, "again", parse)
		defer again.Leave()
		assert.True(t, again.Ready(), "a lingering channel stays subscribed")
		n, err := b.subscribers(client, channel)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n)
	})
}

// killPubSub closes every pub/sub connection of client on the server, as
// a broken network would.
func killPubSub(t *testing.T, client redis.UniversalClient) {
	t.Helper()
	ids, err := pubsubConns(client)
	require.NoError(t, err)
	require.NotEmpty(t, ids)
	err = eachNode(client, func(node redis.UniversalClient) error {
		for _, id := range ids {
			// Each node kills the connections it has: an unknown ID is an error.
			node.Do(context.Background(), "client", "kill", "id", id)
		}
		return nil
	})
	require.NoError(t, err)
}

// A subscription whose connection breaks connects and subscribes again by
// itself; the confirmation wakes every waiter, since notices sent
// meanwhile are lost, and notices reach them again.
func TestBrokenConnectionResubscribes(t *testing.T) {
	eachRealBackend(t, func(t *testing.T, b backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		client := b.newClient(t)
		s := notice.NewRegistry().Site(client)
		channels := []string{newChannel(), newChannel()}
		var waiters []*notice.Waiter
		for _, name := range channels {
			for range 2 {
				w, err := joinReady(ctx, s, name, "waiter")
				require.NoError(t, err)
				defer w.Leave()
				waiters = append(waiters, w)
			}
		}
		for round := range 2 {
			killPubSub(t, client)
			for i, w := range waiters {
				require.NoError(t, awaitWake(w, 5*time.Second), "round %d: waiter %d after the reconnection", round, i)
				assert.True(t, w.Ready())
			}
			for i, name := range channels {
				payload := "waiter:" + randomHex()
				require.NoError(t, publish(ctx, client, name, payload))
				for _, w := range waiters[2*i : 2*i+2] {
					require.NoError(t, awaitWake(w, time.Second), "round %d: a notice on %s", round, name)
					require.NoError(t, arrived(ctx, w, payload))
				}
				n, err := b.subscribers(client, name)
				require.NoError(t, err)
				assert.Equal(t, int64(1), n, "round %d: subscribers of %s", round, name)
			}
		}
	})
}

// While the server is down the subscription keeps trying, a few times a
// second; once it is back, it subscribes again, wakes its waiters, and
// notices reach them.
func TestServerRestartResubscribes(t *testing.T) {
	srv, err := redistest.Start()
	if err != nil {
		redistest.Unavailable(t, err)
	}
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { client.Close() })
	s := notice.NewRegistry().Site(client)
	channel := newChannel()
	w, err := joinReady(ctx, s, channel, "waiter")
	require.NoError(t, err)
	defer w.Leave()

	srv.Kill()
	time.Sleep(300 * time.Millisecond) // the subscription fails and tries again
	require.NoError(t, srv.Restart())
	require.NoError(t, awaitWake(w, 10*time.Second), "after the restart")
	payload := "waiter:" + randomHex()
	require.NoError(t, publish(ctx, client, channel, payload))
	require.NoError(t, awaitWake(w, time.Second), "a notice after the restart")
	require.NoError(t, arrived(ctx, w, payload))
}

// On a Ring, each channel has a subscription of its own, on the shard of
// its name, and notices reach its waiters.
func TestRingSubscribesPerChannel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{
		"one": miniredis.RunT(t).Addr(),
		"two": miniredis.RunT(t).Addr(),
	}})
	t.Cleanup(func() { ring.Close() })
	s := notice.NewRegistry().Site(ring)
	var channels []string
	for range 4 {
		channels = append(channels, newChannel())
	}
	for _, name := range channels {
		w, err := joinReady(ctx, s, name, "waiter")
		require.NoError(t, err)
		defer w.Leave()
		require.NoError(t, publish(ctx, ring, name, "waiter:1"))
		require.NoError(t, awaitWake(w, time.Second), name)
	}
	_, subs := s.Hub().Size()
	assert.Equal(t, len(channels), subs, "subscriptions")
}
