package slotlimit_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/classic"
)

func newCounter(t *testing.T, b *backend, key string, limit int64) *slotlimit.Counter {
	t.Helper()
	c, err := slotlimit.NewCounter(b.Client, slotlimit.Config{Key: key, Limit: limit})
	require.NoError(t, err)
	return c
}

// The classic acquire returns the count, so "took the last slot" and
// "refused" look the same; Counter tells them apart.
func TestCounterTellsLastSlotFromRefusal(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		c := newCounter(t, b, key, 3)

		for i, want := range []struct {
			acquired bool
			count    int64
		}{{true, 1}, {true, 2}, {true, 3}, {false, 3}} {
			res, err := c.TryAcquire(ctx)
			require.NoError(t, err, "step %d", i)
			assert.Equal(t, want.acquired, res.Acquired, "step %d", i)
			assert.Equal(t, want.count, res.Count, "step %d", i)
			if want.acquired {
				assert.False(t, res.ExpiresAt.IsZero(), "step %d", i)
			} else {
				assert.Positive(t, res.EarliestLapse, "step %d: time until the key expires", i)
			}
		}

		// The classic script answers 3 for both cases on the same data.
		require.NoError(t, b.Client.Set(ctx, key, 2, 0).Err())
		took, err := b.Client.Eval(ctx, classic.Incr, []string{key}, 3).Int64()
		require.NoError(t, err)
		refused, err := b.Client.Eval(ctx, classic.Incr, []string{key}, 3).Int64()
		require.NoError(t, err)
		assert.Equal(t, took, refused, "the classic script cannot tell them apart")
	})
}

func TestCounterSetsExpiryAndNeverGoesNegative(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		c := newCounter(t, b, key, 2)

		res, err := c.TryAcquire(ctx)
		require.NoError(t, err)
		require.True(t, res.Acquired)
		if !b.Real {
			assert.True(t, res.ExpiresAt.Equal(miniredisStart.Add(slotlimit.DefaultCounterTTL)), "server clock: %v", res.ExpiresAt)
		}
		pttl, err := b.Client.PTTL(ctx, key).Result()
		require.NoError(t, err)
		assert.InDelta(t, slotlimit.DefaultCounterTTL.Seconds(), pttl.Seconds(), 2)

		err = c.Release(ctx)
		require.NoError(t, err)
		err = c.Release(ctx)
		require.ErrorIs(t, err, slotlimit.ErrNotHeld, "already 0")
		n, err := c.Count(ctx)
		require.NoError(t, err)
		assert.Zero(t, n)

		require.NoError(t, b.Client.Del(ctx, key).Err())
		err = c.Release(ctx)
		require.ErrorIs(t, err, slotlimit.ErrNotHeld, "gone")
		n, err = c.Count(ctx)
		require.NoError(t, err)
		assert.Zero(t, n)
		exists, err := b.Client.Exists(ctx, key).Result()
		require.NoError(t, err)
		assert.Zero(t, exists, "a release of nothing writes nothing")
	})
}

func TestCounterAcquireWaits(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		c := newCounter(t, b, testKey(t, b), 1)
		_, err := c.TryAcquire(ctx)
		require.NoError(t, err)

		short, cancel := context.WithTimeout(ctx, 120*time.Millisecond)
		defer cancel()
		_, err = c.Acquire(short)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		n, err := c.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "the timed-out waiter took nothing")

		done := make(chan error, 1)
		go func() {
			_, err := c.Acquire(ctx)
			done <- err
		}()
		time.Sleep(50 * time.Millisecond)
		err = c.Release(ctx)
		require.NoError(t, err)
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("Acquire did not return after the release")
		}
		n, err = c.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n)
	})
}

func TestCounterWrongTypeKeyIsLeftAlone(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		for _, setup := range []struct {
			name  string
			write func(key string) error
			check func(key string) any
			want  any
		}{
			{"list", func(k string) error { return b.Client.RPush(ctx, k, "x").Err() },
				func(k string) any { return b.Client.LRange(ctx, k, 0, -1).Val() }, []string{"x"}},
			{"not an integer", func(k string) error { return b.Client.Set(ctx, k, "abc", 0).Err() },
				func(k string) any { return b.Client.Get(ctx, k).Val() }, "abc"},
		} {
			key := testKey(t, b)
			require.NoError(t, setup.write(key))
			c := newCounter(t, b, key, 5)
			_, err := c.TryAcquire(ctx)
			require.Error(t, err, setup.name)
			assert.Contains(t, err.Error(), key, setup.name)
			err = c.Release(ctx)
			require.Error(t, err, setup.name)
			assert.Contains(t, err.Error(), key, setup.name)
			_, err = c.Count(ctx)
			require.Error(t, err, setup.name)
			assert.Contains(t, err.Error(), key, setup.name)
			assert.Equal(t, setup.want, setup.check(key), setup.name)
			ttl, err := b.Client.PTTL(ctx, key).Result()
			require.NoError(t, err)
			assert.Equal(t, time.Duration(-1), ttl, "%s: no expiry was set", setup.name)
		}
	})
}

func TestCounterRedisDown(t *testing.T) {
	c, err := slotlimit.NewCounter(downClient(t), slotlimit.Config{Key: "k", Limit: 1})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.TryAcquire(ctx)
	assert.Error(t, err)
	_, err = c.Acquire(ctx)
	assert.Error(t, err)
	assert.NotErrorIs(t, err, context.DeadlineExceeded)
	err = c.Release(ctx)
	assert.Error(t, err)
	_, err = c.Count(ctx)
	assert.Error(t, err)
}

// A service still running the classic scripts and a Counter share one key:
// the count they keep together never passes the limit. The classic reply
// cannot tell taking the last slot from a refusal, so the test reads the
// count in the same transaction, just before the classic script runs, and
// the classic side releases exactly the slots it took.
func TestCounterSharesKeyWithClassicScripts(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		const limit, workers, rounds = 10, 20, 40
		ctx := context.Background()
		key := testKey(t, b)
		c := newCounter(t, b, key, limit)

		classicAcquire := func() (took bool, count int64, err error) {
			var before *redis.StringCmd
			var reply *redis.Cmd
			_, err = b.Client.TxPipelined(ctx, func(p redis.Pipeliner) error {
				before = p.Get(ctx, key)
				reply = p.Eval(ctx, classic.Incr, []string{key}, limit)
				return nil
			})
			if err != nil && !errors.Is(err, redis.Nil) {
				return false, 0, err
			}
			prev, _ := before.Int64() // nil: the key was gone, 0
			count, err = reply.Int64()
			return prev < limit, count, err
		}

		var g gauge
		var maxReply, classicTook, counterTook atomic.Int64
		observe := func(n int64) {
			for m := maxReply.Load(); n > m && !maxReply.CompareAndSwap(m, n); m = maxReply.Load() {
			}
		}
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(old bool) {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					var took bool
					if old {
						var n int64
						var err error
						took, n, err = classicAcquire()
						if !assert.NoError(t, err) {
							return
						}
						observe(n)
					} else {
						res, err := c.TryAcquire(ctx)
						if !assert.NoError(t, err) {
							return
						}
						observe(res.Count)
						took = res.Acquired
					}
					if !took {
						continue
					}
					g.enter()
					time.Sleep(200 * time.Microsecond)
					g.leave()
					if old {
						classicTook.Add(1)
						assert.NoError(t, b.Client.Eval(ctx, classic.Decr, []string{key}).Err())
					} else {
						counterTook.Add(1)
						err := c.Release(ctx)
						assert.NoError(t, err)
					}
				}
			}(w%2 == 0)
		}
		wg.Wait()
		t.Logf("classic scripts took %d, Counter took %d, peak %d", classicTook.Load(), counterTook.Load(), g.peak.Load())
		assert.LessOrEqual(t, g.peak.Load(), int64(limit))
		assert.LessOrEqual(t, maxReply.Load(), int64(limit), "the shared count never passed the limit")
		assert.Greater(t, classicTook.Load(), int64(rounds), "the classic side took slots")
		assert.Greater(t, counterTook.Load(), int64(rounds), "the Counter's side took slots")
		n, err := c.Count(ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "every slot came back")
	})
}

// With no expiry on the key there is no lapse to wait for; a waiting
// Counter polls at its slowest then, it does not spin.
func TestCounterAcquireDoesNotSpin(t *testing.T) {
	b := newMiniredis(t)
	key := testKey(t, b)
	require.NoError(t, b.Client.Set(context.Background(), key, 2, 0).Err())
	client, counts := countedClient(t, b)
	c, err := slotlimit.NewCounter(client, slotlimit.Config{Key: key, Limit: 2})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = c.Acquire(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Positive(t, counts.get("counter acquire"))
	assert.LessOrEqual(t, counts.get("counter acquire"), int64(12), "tries in 500ms")
}
