package slotlimit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
	"github.com/slotlimit/slotlimit/ratelimit"
	"github.com/slotlimit/slotlimit/recent"
)

// New and NewCounter refuse a Config they cannot work with, with an error
// matching ErrInvalidConfig, and send nothing: not even to a client that
// works. (The conformance suite checks the nil clients.)
func TestConstructorsRefuseBadConfigsAndSendNothing(t *testing.T) {
	cfg := slotlimit.Config{Key: "k", Limit: 1}
	b := newRealRedis(t)
	hook := &redistest.CommandCounter{}
	b.Client.AddHook(hook)
	for _, bad := range []slotlimit.Config{{}, {Key: "k"}, {Key: "k", Limit: 1, TTL: -1}, {Key: "a}b", Limit: 1}} {
		_, err := slotlimit.New(b.Client, bad)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "%+v", bad)
		_, err = slotlimit.NewCounter(b.Client, bad)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "%+v", bad)
	}
	_, err := slotlimit.New(b.Client, cfg)
	require.NoError(t, err)
	_, err = slotlimit.NewCounter(b.Client, cfg)
	require.NoError(t, err)
	assert.Zero(t, hook.Commands(), "New and NewCounter send nothing")
}

// A Limiter and a lock.Mutex given the same key never read or change
// each other's data: each meets the other's value as a Redis WRONGTYPE
// error, writes nothing, and leaves the other's holder in place.
func TestLimiterAndLockOnOneKeyKeepApart(t *testing.T) {
	b := newRealRedis(t)
	ctx := context.Background()

	t.Run("lock first", func(t *testing.T) {
		key := testKey(t, b)
		m, err := lock.New(b.Client, lock.Config{Key: key, TTL: time.Minute})
		require.NoError(t, err)
		held, err := m.TryLock(ctx)
		require.NoError(t, err)
		before, err := b.Client.Get(ctx, key).Result()
		require.NoError(t, err)

		l := newLimiter(t, b, key, 2, time.Minute)
		_, err = l.TryAcquire(ctx, "a")
		assert.ErrorContains(t, err, "WRONGTYPE")
		assert.ErrorContains(t, l.Release(ctx, "a"), "WRONGTYPE")
		_, err = l.Count(ctx)
		assert.ErrorContains(t, err, "WRONGTYPE")

		after, err := b.Client.Get(ctx, key).Result()
		require.NoError(t, err)
		assert.Equal(t, before, after, "the lock's value is untouched")
		require.NoError(t, held.Unlock(ctx), "the lock's owner still holds it")
	})

	t.Run("limiter first", func(t *testing.T) {
		key := testKey(t, b)
		l := newLimiter(t, b, key, 2, time.Minute)
		_, err := l.TryAcquire(ctx, "a")
		require.NoError(t, err)

		m, err := lock.New(b.Client, lock.Config{Key: key, TTL: time.Minute})
		require.NoError(t, err)
		_, err = m.TryLock(ctx)
		assert.Error(t, err, "the lock does not take a key that holds leases")
		assert.NotErrorIs(t, err, slotlimit.ErrOutcomeUnknown)

		hs, err := l.Holders(ctx)
		require.NoError(t, err)
		require.Len(t, hs, 1)
		assert.Equal(t, "a", hs[0].ID, "the limiter's holder is untouched")
		require.NoError(t, l.Release(ctx, "a"))
	})
}

// A Counter and a Limiter given the same key keep apart too: the
// Counter's integer and the Limiter's leases are different types.
func TestCounterAndLimiterOnOneKeyKeepApart(t *testing.T) {
	b := newRealRedis(t)
	ctx := context.Background()
	key := testKey(t, b)
	c, err := slotlimit.NewCounter(b.Client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute})
	require.NoError(t, err)
	_, err = c.TryAcquire(ctx)
	require.NoError(t, err)

	l := newLimiter(t, b, key, 2, time.Minute)
	_, err = l.TryAcquire(ctx, "a")
	assert.ErrorContains(t, err, "WRONGTYPE")
	n, err := c.Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "the count is untouched")
}

// An adaptive.Limiter and each package that keeps data on a key, given
// the same key, never read or change each other's data, whichever comes
// first: each works as if alone, the second writes none of the keys the
// first left (their values and their time to live are as they were), and
// every key the adaptive Limiter writes is one of its own names beside
// the key. And every package that keeps data at the key it is given
// refuses the names of an adaptive limit's keys, so that none can be made
// to write there.
func TestAdaptiveAndEveryPackageOnOneKeyKeepApart(t *testing.T) {
	b := newRealRedis(t)
	ctx := context.Background()

	var refused []string
	for _, key := range []string{"k", "{t}:k"} {
		prefix := "{k}/adaptive"
		if key != "k" {
			prefix = key + ":adaptive"
		}
		for _, name := range []string{prefix, prefix + ":leases", prefix + ":q", prefix + ":qd", prefix + ":qw", prefix + ":free"} {
			refused = append(refused, name, name+":ratelimit")
			_, err := slotlimit.New(b.Client, slotlimit.Config{Key: name, Limit: 1})
			assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "Limiter on %q", name)
			_, err = slotlimit.NewCounter(b.Client, slotlimit.Config{Key: name, Limit: 1})
			assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "Counter on %q", name)
			_, err = lock.New(b.Client, lock.Config{Key: name})
			assert.ErrorIs(t, err, lock.ErrInvalidConfig, "lock on %q", name)
			rl, err := ratelimit.New(b.Client, ratelimit.Config{})
			require.NoError(t, err)
			for _, algorithm := range []ratelimit.Algorithm{ratelimit.GCRA, ratelimit.FixedWindow} {
				_, err = rl.Allow(ctx, name, ratelimit.Limit{Rate: 1, Period: time.Second, Algorithm: algorithm})
				assert.ErrorIs(t, err, ratelimit.ErrInvalidKey, "ratelimit %v on %q", algorithm, name)
			}
			_, err = adaptive.New(b.Client, adaptive.Config{Key: name, Max: 5})
			assert.ErrorIs(t, err, adaptive.ErrInvalidConfig, "adaptive on %q", name)
		}
	}
	n, err := b.Client.Exists(ctx, refused...).Result()
	require.NoError(t, err)
	require.Zero(t, n, "the refused calls wrote nothing")

	others := []struct {
		name string
		run  func(t *testing.T, key string)
	}{
		{"Limiter", func(t *testing.T, key string) {
			res, err := newLimiter(t, b, key, 2, time.Minute).TryAcquire(ctx, "h")
			require.NoError(t, err)
			require.True(t, res.Acquired)
		}},
		{"Counter", func(t *testing.T, key string) {
			c, err := slotlimit.NewCounter(b.Client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute})
			require.NoError(t, err)
			res, err := c.TryAcquire(ctx)
			require.NoError(t, err)
			require.True(t, res.Acquired)
		}},
		{"lock", func(t *testing.T, key string) {
			m, err := lock.New(b.Client, lock.Config{Key: key, TTL: time.Minute})
			require.NoError(t, err)
			_, err = m.TryLock(ctx)
			require.NoError(t, err)
		}},
		{"GCRA", func(t *testing.T, key string) {
			rl, err := ratelimit.New(b.Client, ratelimit.Config{})
			require.NoError(t, err)
			res, err := rl.Allow(ctx, key, ratelimit.PerSecond(10))
			require.NoError(t, err)
			require.True(t, res.Allowed)
		}},
		{"fixed window", func(t *testing.T, key string) {
			rl, err := ratelimit.New(b.Client, ratelimit.Config{})
			require.NoError(t, err)
			res, err := rl.Allow(ctx, key, ratelimit.Limit{Rate: 10, Period: time.Minute, Algorithm: ratelimit.FixedWindow})
			require.NoError(t, err)
			require.True(t, res.Allowed)
		}},
		{"recent", func(t *testing.T, key string) {
			l, err := recent.New(b.Client, recent.Config{Key: key, Max: 5, TTL: time.Minute})
			require.NoError(t, err)
			require.NoError(t, l.Add(ctx, "a", "b"))
			n, err := l.Len(ctx)
			require.NoError(t, err)
			require.EqualValues(t, 2, n)
		}},
		{"delayqueue", func(t *testing.T, key string) {
			q, err := delayqueue.New(b.Client, delayqueue.Config{Key: key, Visibility: time.Minute})
			require.NoError(t, err)
			_, err = q.Push(ctx, []byte("job"), time.Minute)
			require.NoError(t, err)
		}},
	}

	// runAdaptive takes two slots and reports one call dropped and one a
	// success: the limit goes down from 5, as it would alone.
	runAdaptive := func(t *testing.T, key string) {
		a, err := adaptive.New(b.Client, adaptive.Config{Key: key, Max: 10, Initial: 5, TTL: time.Minute})
		require.NoError(t, err)
		s1, err := a.TryAcquire(ctx)
		require.NoError(t, err)
		s2, err := a.TryAcquire(ctx)
		require.NoError(t, err)
		require.NoError(t, s1.Dropped(ctx))
		require.NoError(t, s2.Success(ctx))
		limit, err := a.Limit(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 4, limit, "one drop took the limit from 5 to 4")
		info, err := a.Inspect(ctx)
		require.NoError(t, err)
		require.Zero(t, info.InUse)
	}

	for _, other := range others {
		for _, adaptiveFirst := range []bool{false, true} {
			name := other.name + " first"
			first, second := other.run, runAdaptive
			if adaptiveFirst {
				name = "adaptive first, then " + other.name
				first, second = runAdaptive, other.run
			}
			t.Run(name, func(t *testing.T) {
				key := testKey(t, b)
				t.Cleanup(func() {
					for k := range storedBy(t, b, key) {
						b.Client.Del(context.Background(), k)
					}
				})
				first(t, key)
				before := storedBy(t, b, key)
				require.NotEmpty(t, before)
				second(t, key)
				after := storedBy(t, b, key)
				for k, was := range before {
					now, ok := after[k]
					require.True(t, ok, "%s is gone", k)
					assert.Equal(t, was.value, now.value, "%s changed", k)
					assert.LessOrEqual(t, now.ttl, was.ttl, "%s's time to live was moved", k)
				}
				// The adaptive Limiter's keys are those of the first run
				// when it came first, else the new ones.
				tag := "{" + key + "}/adaptive"
				adaptiveKeys := 0
				if adaptiveFirst {
					for k := range before {
						adaptiveKeys++
						assert.True(t, k == tag || strings.HasPrefix(k, tag+":"), "adaptive wrote %s", k)
					}
				}
				for k := range after {
					if _, ok := before[k]; ok {
						continue
					}
					if adaptiveFirst {
						assert.False(t, strings.HasPrefix(k, tag), "%s wrote %s", other.name, k)
						continue
					}
					adaptiveKeys++
					assert.True(t, k == tag || strings.HasPrefix(k, tag+":"), "adaptive wrote %s", k)
				}
				assert.NotZero(t, adaptiveKeys, "adaptive wrote its state")
			})
		}
	}
}

// A stored is a key's value, as DUMP gives it, and its time to live.
type stored struct {
	value string
	ttl   time.Duration
}

// storedBy returns every key of b whose name holds key, with its value
// and its time to live.
func storedBy(t *testing.T, b *backend, key string) map[string]stored {
	t.Helper()
	ctx := context.Background()
	keys := map[string]stored{}
	iter := b.Client.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		if !strings.Contains(k, key) {
			continue
		}
		value, err := b.Client.Dump(ctx, k).Result()
		require.NoError(t, err, k)
		ttl, err := b.Client.PTTL(ctx, k).Result()
		require.NoError(t, err, k)
		keys[k] = stored{value, ttl}
	}
	require.NoError(t, iter.Err())
	return keys
}
