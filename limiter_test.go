package slotlimit_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/loopback"
)

// leaseTTL is short so that lapses on a real server take little waiting.
const leaseTTL = 300 * time.Millisecond

func newLimiter(t *testing.T, b *backend, key string, limit int64, ttl time.Duration) *slotlimit.Limiter {
	t.Helper()
	l, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: limit, TTL: ttl})
	require.NoError(t, err)
	return l
}

func holderIDs(t *testing.T, l *slotlimit.Limiter) []string {
	t.Helper()
	hs, err := l.Holders(context.Background())
	require.NoError(t, err)
	ids := []string{}
	for _, h := range hs {
		ids = append(ids, h.ID)
	}
	return ids
}

func TestLimiterTakesUpToLimit(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		l := newLimiter(t, b, testKey(t, b), 3, time.Minute)

		steps := []struct {
			holder   string
			acquired bool
			count    int64
		}{
			{"d1", true, 1},
			{"d2", true, 2},
			{"d3", true, 3}, // the last slot: taken, and told apart from a refusal
			{"d4", false, 3},
			{"d5", false, 3},
		}
		for i, s := range steps {
			res, err := l.TryAcquire(ctx, s.holder)
			require.NoError(t, err, "step %d", i)
			assert.Equal(t, s.acquired, res.Acquired, "step %d", i)
			assert.Equal(t, s.count, res.Count, "step %d", i)
			assert.Equal(t, int64(3), res.Limit, "step %d", i)
			if s.acquired {
				assert.False(t, res.ExpiresAt.IsZero(), "step %d", i)
				assert.Zero(t, res.EarliestLapse, "step %d", i)
			} else {
				assert.True(t, res.ExpiresAt.IsZero(), "step %d", i)
				assert.Positive(t, res.EarliestLapse, "step %d", i)
			}
		}
		n, err := l.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(3), n)
		assert.ElementsMatch(t, []string{"d1", "d2", "d3"}, holderIDs(t, l))
	})
}

// A classic INCR limiter lets a device that reports again while holding
// a slot take a second one; a Limiter renews its one lease. Times are the
// server's; the TTL leaves the test's calls a second of lateness.
func TestLimiterReacquireRefreshesWithoutSecondSlot(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		const ttl = 2 * time.Second
		l := newLimiter(t, b, testKey(t, b), 2, ttl)

		first, err := l.TryAcquire(ctx, "d1")
		require.NoError(t, err)
		waitServerPast(t, b, first.ExpiresAt.Add(-ttl/2), 10*time.Second)
		again, err := l.TryAcquire(ctx, "d1")
		require.NoError(t, err)
		assert.True(t, again.Acquired)
		assert.Equal(t, int64(1), again.Count)
		assert.True(t, again.ExpiresAt.After(first.ExpiresAt), "lease refreshed")

		// The refreshed lease outlives the first deadline.
		waitServerPast(t, b, first.ExpiresAt, 10*time.Second)
		assert.Equal(t, []string{"d1"}, holderIDs(t, l))

		// Even at the limit, a holder gets its own slot back.
		_, err = l.TryAcquire(ctx, "d2")
		require.NoError(t, err)
		res, err := l.TryAcquire(ctx, "d1")
		require.NoError(t, err)
		assert.True(t, res.Acquired)
		assert.Equal(t, int64(2), res.Count)
	})
}

// A classic DECR release, retried, frees a slot that someone else holds;
// a Limiter's release frees only the holder's own lease, once.
func TestLimiterReleaseIsIdempotent(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		l := newLimiter(t, b, testKey(t, b), 2, time.Minute)
		for _, h := range []string{"d1", "d2"} {
			res, err := l.TryAcquire(ctx, h)
			require.NoError(t, err)
			require.True(t, res.Acquired)
		}

		err := l.Release(ctx, "d1")
		require.NoError(t, err)
		err = l.Release(ctx, "d1") // a retried result report
		require.ErrorIs(t, err, slotlimit.ErrNotHeld)
		err = l.Release(ctx, "never-held")
		require.ErrorIs(t, err, slotlimit.ErrNotHeld)

		assert.Equal(t, []string{"d2"}, holderIDs(t, l), "d2 keeps its slot")
		n, err := l.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n)
	})
}

// A classic counter's whole-key TTL frees every slot at once when it
// lapses; a Limiter's lapsed lease frees only its own slot. Times are the
// server's; the TTL leaves the test's calls a second of lateness.
func TestLimiterLapsedLeaseFreesOnlyItsSlot(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		const ttl = 2 * time.Second
		l := newLimiter(t, b, testKey(t, b), 2, ttl)

		crashed, err := l.TryAcquire(ctx, "crashed")
		require.NoError(t, err)
		waitServerPast(t, b, crashed.ExpiresAt.Add(-ttl/2), 10*time.Second)
		_, err = l.TryAcquire(ctx, "alive")
		require.NoError(t, err)
		res, err := l.TryAcquire(ctx, "waiting")
		require.NoError(t, err)
		require.False(t, res.Acquired)

		waitServerPast(t, b, crashed.ExpiresAt, 10*time.Second) // past crashed's deadline, before alive's
		assert.Equal(t, []string{"alive"}, holderIDs(t, l))
		res, err = l.TryAcquire(ctx, "waiting")
		require.NoError(t, err)
		assert.True(t, res.Acquired, "the lapsed slot is free again")
		res, err = l.TryAcquire(ctx, "another")
		require.NoError(t, err)
		assert.False(t, res.Acquired, "only one slot was freed")
		assert.ElementsMatch(t, []string{"alive", "waiting"}, holderIDs(t, l))
	})
}

// Under a classic counter, steady traffic refreshes the whole key's TTL
// forever, so a crashed device's slot is never freed; a Limiter frees it.
// The TTL leaves each busy device's hold a second of lateness.
func TestLimiterSteadyTrafficStillFreesLeakedSlot(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		const ttl = 2 * time.Second
		l := newLimiter(t, b, testKey(t, b), 2, ttl)
		crashed, err := l.TryAcquire(ctx, "crashed")
		require.NoError(t, err)

		// Other devices keep taking and returning the second slot, until
		// the server's clock is past the crashed device's deadline.
		for i := 0; !b.Now().After(crashed.ExpiresAt); i++ {
			require.Less(t, i, 100, "the server's clock does not pass the deadline")
			res, err := l.TryAcquire(ctx, fmt.Sprintf("busy-%d", i))
			require.NoError(t, err)
			require.True(t, res.Acquired, "round %d", i)
			b.Advance(ttl / 4)
			err = l.Release(ctx, fmt.Sprintf("busy-%d", i))
			require.NoError(t, err)
		}
		assert.Empty(t, holderIDs(t, l), "the crashed device's slot lapsed")
		for _, h := range []string{"new-1", "new-2"} {
			res, err := l.TryAcquire(ctx, h)
			require.NoError(t, err)
			assert.True(t, res.Acquired, "%s: both slots are free to take", h)
		}
	})
}

func TestLimiterDifferentTTLsShareKey(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		short := newLimiter(t, b, key, 2, leaseTTL)
		long := newLimiter(t, b, key, 2, 3*leaseTTL)

		_, err := long.TryAcquire(ctx, "long")
		require.NoError(t, err)
		_, err = short.TryAcquire(ctx, "short")
		require.NoError(t, err)
		res, err := long.TryAcquire(ctx, "third")
		require.NoError(t, err)
		assert.False(t, res.Acquired, "both limiters count the same slots")

		b.Advance(leaseTTL + leaseTTL/3)
		assert.Equal(t, []string{"long"}, holderIDs(t, short), "each lease keeps its own deadline")
		b.Advance(2 * leaseTTL)
		assert.Empty(t, holderIDs(t, long))
	})
}

func TestLimiterKeyExpiresWithLastLease(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		l := newLimiter(t, b, key, 5, leaseTTL)

		_, err := l.TryAcquire(ctx, "d1")
		require.NoError(t, err)
		b.Advance(leaseTTL / 2)
		_, err = l.TryAcquire(ctx, "d2")
		require.NoError(t, err)

		b.Advance(leaseTTL/2 + leaseTTL/6) // d1 lapsed, d2 live
		n, err := b.Client.Exists(ctx, key).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "the key lives while a lease does")

		b.Advance(leaseTTL / 2) // every lease lapsed
		n, err = b.Client.Exists(ctx, key).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(0), n, "an idle key is gone")

		// Releasing the last holder removes the key at once.
		_, err = l.TryAcquire(ctx, "d3")
		require.NoError(t, err)
		err = l.Release(ctx, "d3")
		require.NoError(t, err)
		n, err = b.Client.Exists(ctx, key).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(0), n)
	})
}

// Renew moves a lease's deadline, and the key's expiry with it, by the
// server's clock: past the first deadline the holder still holds; a
// lapsed lease is not renewed. The TTL leaves the test's own calls a
// second of lateness, which a busy machine does not reach.
func TestLimiterRenew(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		const ttl = 1500 * time.Millisecond
		l := newLimiter(t, b, key, 1, ttl)

		_, err := l.TryAcquire(ctx, "d1")
		require.NoError(t, err)
		first := holderDeadline(t, l, "d1")
		waitServerPast(t, b, first.Add(-ttl/3), 10*time.Second)
		err = l.Renew(ctx, "d1")
		require.NoError(t, err)
		renewed := holderDeadline(t, l, "d1")
		assert.True(t, renewed.After(first), "renewed: the deadline was %v, now %v", first, renewed)
		waitServerPast(t, b, first, 10*time.Second) // past the first deadline, before the renewed one
		assert.Equal(t, []string{"d1"}, holderIDs(t, l))
		pttl, err := b.Client.PTTL(ctx, key).Result()
		require.NoError(t, err)
		assert.Positive(t, pttl, "renewal moved the key's expiry too")

		waitServerPast(t, b, renewed, 10*time.Second) // lapsed
		err = l.Renew(ctx, "d1")
		require.ErrorIs(t, err, slotlimit.ErrNotHeld, "a lapsed lease is not renewed")
		assert.Empty(t, holderIDs(t, l), "renew does not re-acquire")

		err = l.Renew(ctx, "never-held")
		require.ErrorIs(t, err, slotlimit.ErrNotHeld)
		assert.Empty(t, holderIDs(t, l))
	})
}

// Deadlines come from the server's clock. miniredis runs at a fixed time in
// 2001, so a deadline computed from the caller's clock would be decades off.
func TestLimiterUsesServerClock(t *testing.T) {
	b := newMiniredis(t)
	ctx := context.Background()
	l := newLimiter(t, b, testKey(t, b), 1, time.Minute)

	res, err := l.TryAcquire(ctx, "d1")
	require.NoError(t, err)
	assert.True(t, res.ExpiresAt.Equal(miniredisStart.Add(time.Minute)), "ExpiresAt %v", res.ExpiresAt)
	hs, err := l.Holders(ctx)
	require.NoError(t, err)
	require.Len(t, hs, 1)
	assert.True(t, hs[0].ExpiresAt.Equal(miniredisStart.Add(time.Minute)))

	b.Advance(20 * time.Second)
	res, err = l.TryAcquire(ctx, "d2")
	require.NoError(t, err)
	assert.False(t, res.Acquired)
	assert.Equal(t, 40*time.Second, res.EarliestLapse, "time until d1's lease lapses")
}

func TestLimiterHolderBytesRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		l := newLimiter(t, b, testKey(t, b), 10, time.Minute)
		ids := []string{
			"{braces}", "a:b:c", "line\nbreak", "\x00nul\xff", "空格 unicode",
			string(make([]byte, slotlimit.MaxHolderLen)),
		}
		for _, id := range ids {
			res, err := l.TryAcquire(ctx, id)
			require.NoError(t, err)
			require.True(t, res.Acquired, "%q", id)
		}
		assert.ElementsMatch(t, ids, holderIDs(t, l))
	})
}

func TestLimiterAcquireWaitsForRelease(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		l := newLimiter(t, b, testKey(t, b), 1, time.Minute)
		_, err := l.TryAcquire(ctx, "d1")
		require.NoError(t, err)

		done := make(chan slotlimit.Result, 1)
		go func() {
			res, err := l.Acquire(ctx, "d2")
			assert.NoError(t, err)
			done <- res
		}()
		select {
		case <-done:
			t.Fatal("Acquire returned while the only slot was held")
		case <-time.After(150 * time.Millisecond):
		}
		err = l.Release(ctx, "d1")
		require.NoError(t, err)
		select {
		case res := <-done:
			assert.True(t, res.Acquired)
			assert.Equal(t, []string{"d2"}, holderIDs(t, l))
		case <-time.After(5 * time.Second):
			t.Fatal("Acquire did not return after the release")
		}
	})
}

func TestLimiterAcquireWaitsForLapse(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l := newLimiter(t, b, testKey(t, b), 1, leaseTTL)
		_, err := l.TryAcquire(ctx, "crashed")
		require.NoError(t, err)

		done := make(chan error, 1)
		go func() {
			_, err := l.Acquire(ctx, "d2")
			done <- err
		}()
		b.Advance(leaseTTL + leaseTTL/3)
		require.NoError(t, <-done)
		assert.Equal(t, []string{"d2"}, holderIDs(t, l))
	})
}

func TestLimiterAcquireContextEnds(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		l := newLimiter(t, b, testKey(t, b), 1, time.Minute)
		_, err := l.TryAcquire(context.Background(), "d1")
		require.NoError(t, err)

		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Millisecond)
		defer cancel()
		res, err := l.Acquire(ctx, "d2")
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.False(t, res.Acquired)
		assert.Equal(t, []string{"d1"}, holderIDs(t, l), "the waiter holds nothing")

		// A done ctx sends nothing: even a holder's existing slot is kept.
		done, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = l.Acquire(done, "d1")
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, []string{"d1"}, holderIDs(t, l))
	})
}

func TestLimiterSurvivesScriptFlush(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		l := newLimiter(t, b, testKey(t, b), 2, time.Minute)
		res, err := l.TryAcquire(ctx, "d1")
		require.NoError(t, err)
		require.True(t, res.Acquired)

		require.NoError(t, b.Client.ScriptFlush(ctx).Err())
		res, err = l.TryAcquire(ctx, "d2")
		require.NoError(t, err)
		assert.True(t, res.Acquired)
		assert.Equal(t, int64(2), res.Count)
	})
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	b := newMiniredis(t)
	for i, cfg := range []slotlimit.Config{
		{Key: "", Limit: 1},
		{Key: "k", Limit: 0},
		{Key: "k", Limit: -5},
		{Key: "k", Limit: 1, TTL: -time.Second},
		{Key: "k", Limit: 1, TTL: time.Microsecond},
		{Key: "k", Limit: 1, Replicas: -1},
		{Key: "k", Limit: 1, Replicas: 1, ReplicaTimeout: -time.Second},
		{Key: "k", Limit: 1, Replicas: 1, ReplicaTimeout: time.Microsecond}, // WAIT would wait for ever
		// Keys other packages keep beside a key: a recent list's, a delay
		// queue's, a GCRA limit's, a lock's queue, a red packet's, an
		// adaptive limit's.
		{Key: "{k}/recent", Limit: 1},
		{Key: "{t}:k:recent", Limit: 1},
		{Key: "{k}/delayqueue", Limit: 1},
		{Key: "{t}:k:delayqueue:leases", Limit: 1},
		{Key: "{k}/ratelimit", Limit: 1},
		{Key: "{k}/lock:q", Limit: 1},
		{Key: "{p:0}:redpacket:due", Limit: 1},
		{Key: "{k}/adaptive", Limit: 1}, // an adaptive limit's
		{Key: "{t}:k:adaptive:leases", Limit: 1},
		// And those a Limiter or a Counter keeps beside its own key.
		{Key: "{k}/full:1", Limit: 1},
		{Key: "{k}/released:x", Limit: 1},
	} {
		_, err := slotlimit.New(b.Client, cfg)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "step %d", i)
		_, err = slotlimit.NewCounter(b.Client, cfg)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "step %d", i)
	}
	_, err := slotlimit.New(nil, slotlimit.Config{Key: "k", Limit: 1})
	assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig)
	_, err = slotlimit.New((*redis.Client)(nil), slotlimit.Config{Key: "k", Limit: 1})
	assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "a typed nil client")
	_, err = slotlimit.NewCounter(nil, slotlimit.Config{Key: "k", Limit: 1})
	assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig)

	l, err := slotlimit.New(b.Client, slotlimit.Config{Key: "k", Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, slotlimit.DefaultTTL, l.Config().TTL)
	c, err := slotlimit.NewCounter(b.Client, slotlimit.Config{Key: "k", Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, slotlimit.DefaultCounterTTL, c.Config().TTL)
}

func TestLimiterRejectsInvalidHolder(t *testing.T) {
	b := newMiniredis(t)
	ctx := context.Background()
	key := testKey(t, b)
	l := newLimiter(t, b, key, 1, time.Minute)
	for _, holder := range []string{"", string(make([]byte, slotlimit.MaxHolderLen+1))} {
		_, err := l.TryAcquire(ctx, holder)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder)
		_, err = l.Acquire(ctx, holder)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder)
		err = l.Release(ctx, holder)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder)
		err = l.Renew(ctx, holder)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder)
	}
	n, err := b.Client.Exists(ctx, key).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "nothing was written")
}

func TestLimiterWrongTypeKeyIsLeftAlone(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		for _, kind := range []struct {
			name  string
			write func(key string) error
			read  func(key string) any
			want  any
		}{
			{"string", func(k string) error { return b.Client.Set(ctx, k, "not a lease set", 0).Err() },
				func(k string) any { return b.Client.Get(ctx, k).Val() }, "not a lease set"},
			{"hash", func(k string) error { return b.Client.HSet(ctx, k, "f", "v").Err() },
				func(k string) any { return b.Client.HGetAll(ctx, k).Val() }, map[string]string{"f": "v"}},
			{"list", func(k string) error { return b.Client.RPush(ctx, k, "x").Err() },
				func(k string) any { return b.Client.LRange(ctx, k, 0, -1).Val() }, []string{"x"}},
			{"set", func(k string) error { return b.Client.SAdd(ctx, k, "x").Err() },
				func(k string) any { return b.Client.SMembers(ctx, k).Val() }, []string{"x"}},
		} {
			key := testKey(t, b)
			require.NoError(t, kind.write(key))
			l := newLimiter(t, b, key, 1, time.Minute)
			calls := map[string]func() error{
				"TryAcquire":  func() error { _, err := l.TryAcquire(ctx, "d1"); return err },
				"TryAcquireN": func() error { _, err := l.TryAcquireN(ctx, "d1", 1); return err },
				"Acquire":     func() error { _, err := l.Acquire(ctx, "d1"); return err },
				"Release":     func() error { return l.Release(ctx, "d1") },
				"Renew":       func() error { return l.Renew(ctx, "d1") },
				"Count":       func() error { _, err := l.Count(ctx); return err },
				"Holders":     func() error { _, err := l.Holders(ctx); return err },
			}
			for name, call := range calls {
				err := call()
				require.Error(t, err, "%s on a %s", name, kind.name)
				assert.Contains(t, err.Error(), key, "%s on a %s: the error names the key", name, kind.name)
			}
			assert.Equal(t, kind.want, kind.read(key), kind.name)
			assert.Equal(t, kind.name, b.Client.Type(ctx, key).Val())
			assert.Equal(t, time.Duration(-1), b.Client.PTTL(ctx, key).Val(), "%s: no expiry was set", kind.name)
			assert.Equal(t, []string{key}, storedKeys(t, b, key, 1), "%s: no other key was written", kind.name)
		}
	})
}

// downClient is a client for a loopback port where nothing listens.
func downClient(t *testing.T) redis.UniversalClient {
	addr, err := loopback.FreeAddr()
	require.NoError(t, err)
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { client.Close() })
	return client
}

func TestLimiterRedisDown(t *testing.T) {
	l, err := slotlimit.New(downClient(t), slotlimit.Config{Key: "k", Limit: 1})
	require.NoError(t, err)
	calls := map[string]func(ctx context.Context) error{
		"TryAcquire": func(ctx context.Context) error { _, err := l.TryAcquire(ctx, "d1"); return err },
		"Acquire":    func(ctx context.Context) error { _, err := l.Acquire(ctx, "d1"); return err },
		"Release":    func(ctx context.Context) error { return l.Release(ctx, "d1") },
		"Renew":      func(ctx context.Context) error { return l.Renew(ctx, "d1") },
		"Count":      func(ctx context.Context) error { _, err := l.Count(ctx); return err },
		"Holders":    func(ctx context.Context) error { _, err := l.Holders(ctx); return err },
	}
	for name, call := range calls {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := call(ctx)
		cancel()
		require.Error(t, err, name)
		assert.NotErrorIs(t, err, context.DeadlineExceeded, "%s: the connection error comes back, not a wait", name)
		var netErr *net.OpError
		assert.ErrorAs(t, err, &netErr, "%s: the client's error is kept", name)
	}
}

// miniredis reads a round deadline back as "1.7e+12"; the key's expiry is
// still set from it, and nothing is left half-written.
func TestLimiterRoundServerClock(t *testing.T) {
	b := newMiniredis(t)
	ctx := context.Background()
	round := time.UnixMilli(1_700_000_000_000)
	b.Advance(round.Sub(b.Now()) - time.Minute)
	key := testKey(t, b)
	l := newLimiter(t, b, key, 2, time.Minute)
	res, err := l.TryAcquireN(ctx, "d1", 2)
	require.NoError(t, err)
	assert.True(t, res.ExpiresAt.Equal(round))
	assert.Equal(t, time.Minute, b.Client.PTTL(ctx, key).Val())
	hs, err := l.Holders(ctx)
	require.NoError(t, err)
	require.Len(t, hs, 1)
	assert.True(t, hs[0].ExpiresAt.Equal(round))
}

// The replies parse the same under RESP2 as under go-redis's default RESP3.
func TestLimiterRESP2(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		client := newClient(t, b, func(o *redis.UniversalOptions) { o.Protocol = 2 })
		ctx := context.Background()
		l := newLimiterOn(t, client, slotlimit.Config{Key: testKey(t, b), Limit: 3, TTL: time.Minute})
		res, err := l.TryAcquireN(ctx, "d1", 2)
		require.NoError(t, err)
		assert.True(t, res.Acquired)
		assert.Equal(t, int64(2), res.Count)
		hs, err := l.Holders(ctx)
		require.NoError(t, err)
		require.Len(t, hs, 1)
		assert.Equal(t, slotlimit.Holder{ID: "d1", ExpiresAt: res.ExpiresAt, Weight: 2}, hs[0])
		n, err := l.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), n)
		err = l.Renew(ctx, "d1")
		require.NoError(t, err)
		err = l.Release(ctx, "d1")
		require.NoError(t, err)
	})
}
