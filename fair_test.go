package slotlimit_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// awaitQueued waits until n waiters are queued on key. It reads the queue
// the scripts keep beside the key (see scripts/acquire.lua).
func awaitQueued(t *testing.T, b *backend, key string, n int64) {
	t.Helper()
	queue := "{" + key + "}/q"
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if got, _ := b.Client.ZCard(context.Background(), queue).Result(); got == n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%d waiters did not queue", n)
}

// awaitSubscribed waits until some process subscribes to key's notices.
func awaitSubscribed(t *testing.T, b *backend, key string) {
	t.Helper()
	channel := "{" + key + "}/free"
	ctx := context.Background()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var n atomic.Int64
		if cluster, ok := b.Client.(*redis.ClusterClient); ok {
			cluster.ForEachShard(ctx, func(ctx context.Context, shard *redis.Client) error {
				subs, _ := shard.PubSubShardNumSub(ctx, channel).Result()
				n.Add(subs[channel])
				return nil
			})
		} else {
			subs, _ := b.Client.PubSubNumSub(ctx, channel).Result()
			n.Add(subs[channel])
		}
		if n.Load() > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("nobody subscribed to the notices")
}

// In fair mode, waiters on two clients take the slot in the order they
// began to wait.
func TestFairOrderAcrossClients(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		key := testKey(t, b)
		cfg := slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute, Fair: true}
		limiters := []*slotlimit.Limiter{newLimiterOn(t, newClient(t, b), cfg), newLimiterOn(t, newClient(t, b), cfg)}
		_, err := limiters[0].TryAcquire(ctx, "first")
		require.NoError(t, err)

		const waiters = 6
		var mu sync.Mutex
		var order []string
		var wg sync.WaitGroup
		for i := 0; i < waiters; i++ {
			name := fmt.Sprintf("w%d", i)
			l := limiters[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := l.Acquire(ctx, name)
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
				time.Sleep(10 * time.Millisecond)
				err = l.Release(ctx, name)
				assert.NoError(t, err)
			}()
			awaitQueued(t, b, key, int64(i+1))
		}
		// A newcomer that does not wait cannot cut in line.
		err = limiters[1].Release(ctx, "first")
		require.NoError(t, err)
		res, err := limiters[1].TryAcquire(ctx, "newcomer")
		require.NoError(t, err)
		assert.False(t, res.Acquired, "the queue comes first")

		wg.Wait()
		assert.Equal(t, []string{"w0", "w1", "w2", "w3", "w4", "w5"}, order)
	})
}

// A waiter that dies while queued holds up the queue only until its entry
// lapses.
func TestFairDeadWaiterLapses(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		key := testKey(t, b)
		cfg := slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute, Fair: true}
		l := newLimiterOn(t, b.Client, cfg)
		_, err := l.TryAcquire(ctx, "first")
		require.NoError(t, err)

		// The dead waiter's process loses its connection and its cleanup fails.
		deadClient := newClient(t, b)
		dead := newLimiterOn(t, deadClient, cfg)
		deadCtx, kill := context.WithCancel(ctx)
		deadDone := acquireAsync(deadCtx, dead, "dead", 1)
		awaitQueued(t, b, key, 1)
		require.NoError(t, deadClient.Close())
		kill()
		assert.Error(t, <-deadDone)

		alive := acquireAsync(ctx, l, "alive", 1)
		awaitQueued(t, b, key, 2)
		err = l.Release(ctx, "first")
		require.NoError(t, err)
		select {
		case <-alive:
			t.Fatal("alive passed the dead waiter before its entry lapsed")
		case <-time.After(300 * time.Millisecond):
		}
		b.Advance(3 * time.Second) // the queue entry's lease
		requireDone(t, alive, 5*time.Second, "alive after the dead entry lapsed")
		assert.Equal(t, []string{"alive"}, holderIDs(t, l))
	})
}

// A weighted waiter at the head of the queue is not starved by a stream of
// one-unit callers: freed units wait for it.
func TestFairWeightedHeadNotStarved(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		key := testKey(t, b)
		l := newLimiterOn(t, b.Client, slotlimit.Config{Key: key, Limit: 3, TTL: time.Minute, Fair: true})
		for _, h := range []string{"h1", "h2", "h3"} {
			_, err := l.TryAcquire(ctx, h)
			require.NoError(t, err)
		}
		heavy := acquireAsync(ctx, l, "heavy", 3)
		awaitQueued(t, b, key, 1)
		light := acquireAsync(ctx, l, "light", 1)
		awaitQueued(t, b, key, 2)

		for i, h := range []string{"h1", "h2"} {
			err := l.Release(ctx, h)
			require.NoError(t, err)
			res, err := l.TryAcquire(ctx, fmt.Sprintf("passer-by-%d", i))
			require.NoError(t, err)
			assert.False(t, res.Acquired, "freed units are kept for the heavy waiter")
		}
		select {
		case <-light:
			t.Fatal("a one-unit waiter passed the heavy one")
		case <-time.After(200 * time.Millisecond):
		}
		err := l.Release(ctx, "h3")
		require.NoError(t, err)
		requireDone(t, heavy, 3*time.Second, "heavy")
		assert.Equal(t, map[string]int64{"heavy": 3}, holderWeights(t, l))

		err = l.Release(ctx, "heavy")
		require.NoError(t, err)
		requireDone(t, light, 3*time.Second, "light")
	})
}

// Without Fair, a caller may take a freed unit ahead of a waiter.
func TestUnfairLetsCallersPass(t *testing.T) {
	b := newMiniredis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l := newLimiter(t, b, testKey(t, b), 2, time.Minute)
	for _, h := range []string{"h1", "h2"} {
		_, err := l.TryAcquire(ctx, h)
		require.NoError(t, err)
	}
	heavy := acquireAsync(ctx, l, "heavy", 2)
	time.Sleep(50 * time.Millisecond)
	err := l.Release(ctx, "h1")
	require.NoError(t, err)
	res, err := l.TryAcquire(ctx, "passer-by")
	require.NoError(t, err)
	assert.True(t, res.Acquired)
	cancel()
	<-heavy
}

// Without Fair, a release serves a queued waiter whose units fit, passing
// over one ahead that wants more than is free.
func TestUnfairReleaseServesWaiterThatFits(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		key := testKey(t, b)
		l := newLimiter(t, b, key, 2, time.Minute)
		for _, h := range []string{"h1", "h2"} {
			_, err := l.TryAcquire(ctx, h)
			require.NoError(t, err)
		}
		heavy := acquireAsync(ctx, l, "heavy", 2)
		awaitQueued(t, b, key, 1)
		light := acquireAsync(ctx, l, "light", 1)
		awaitQueued(t, b, key, 2)
		awaitSubscribed(t, b, key)
		err := l.Release(ctx, "h1")
		require.NoError(t, err)
		requireDone(t, light, 3*time.Second, "light, past heavy")
		assert.Equal(t, map[string]int64{"h2": 1, "light": 1}, holderWeights(t, l))
		cancel()
		<-heavy
	})
}
