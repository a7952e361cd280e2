package lock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

func TestTryLockExcludesAndUnlockFrees(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		m, key := newMutex(t, b, time.Minute)

		first, err := m.TryLock(ctx)
		require.NoError(t, err)
		require.NotNil(t, first)
		assert.Equal(t, first.Token(), b.Client.Get(ctx, key).Val(), "the key holds the owner's token")
		assert.Positive(t, first.Fence())

		second, err := m.TryLock(ctx)
		assert.ErrorIs(t, err, lock.ErrNotObtained)
		assert.Nil(t, second)

		require.NoError(t, first.Unlock(ctx))
		assert.ErrorIs(t, first.Unlock(ctx), lock.ErrNotHeld, "unlocked already")
		assert.Zero(t, b.Client.Exists(ctx, key).Val(), "the key is gone")

		b.Advance(time.Millisecond) // miniredis's clock moves only when told to
		third, err := m.TryLock(ctx)
		require.NoError(t, err)
		assert.Greater(t, third.Fence(), first.Fence(), "the next owner's fence is higher")
		require.NoError(t, third.Unlock(ctx))
	})
}

// The key lapses on the server's clock, and the fence still grows across
// the lapse, when the last fence's own key may be gone.
func TestLockLapsesAndFenceGrowsAcrossLapse(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		m, key := newMutex(t, b, 50*time.Millisecond)
		var last int64
		for i := range 5 {
			before := b.Now()
			l, err := m.TryLock(ctx)
			require.NoError(t, err, "step %d", i)
			assert.Greater(t, l.Fence(), last, "step %d", i)
			last = l.Fence()
			assertLeaseAtMost(t, b, key, 50*time.Millisecond, before, fmt.Sprintf("step %d", i))
			b.Advance(120 * time.Millisecond) // past the lease, and the fence's
			assert.ErrorIs(t, l.Refresh(ctx), lock.ErrNotHeld, "step %d: a lapsed lock is not refreshed", i)
			assert.ErrorIs(t, l.Unlock(ctx), lock.ErrNotHeld, "step %d", i)
		}
	})
}

// A refresh moves the lease's deadline on the server's clock to TTL after
// the refresh, so the lock outlives its first deadline. The TTL is long,
// so that no load can make the lease lapse before the refresh; the check
// is of the deadlines the server keeps, and, where the clock can be
// moved at once, of the key past the first of them.
func TestRefreshExtendsLease(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		const ttl = 10 * time.Second
		m, key := newMutex(t, b, ttl)
		l, err := m.TryLock(ctx)
		require.NoError(t, err)
		first := expireTime(t, b, key)
		b.Advance(200 * time.Millisecond)
		before := b.Now()
		require.NoError(t, l.Refresh(ctx))
		after := b.Now()
		second := expireTime(t, b, key)
		assert.False(t, second.Before(first.Add(200*time.Millisecond)), "refreshed at least 200ms after the lock: deadlines %v, then %v", first, second)
		assert.False(t, second.Before(before.Add(ttl).Truncate(time.Millisecond)), "TTL after the refresh: %v, refreshed at %v", second, before)
		assert.False(t, second.After(after.Add(ttl)), "TTL after the refresh: %v, refreshed by %v", second, after)
		if !b.Real { // past the first deadline at once
			waitServerPast(t, b, first, 0)
		}
		assert.Equal(t, l.Token(), b.Client.Get(ctx, key).Val(), "still held")
		require.NoError(t, l.Unlock(ctx))
	})
}

// The classic lock scripts, SETNX and PEXPIRE, and compare-and-delete,
// verbatim, on the same key.
const (
	classicLock   = "local lock_key = KEYS[1]\nlocal lock_timeout = tonumber(ARGV[1])\nlocal unique_value = ARGV[2]\n\nlocal locked = redis.call('setnx', lock_key, unique_value)\nif locked == 1 then\nredis.call('pexpire', lock_key, lock_timeout)\nend\n\nreturn locked\n"
	classicUnlock = "local lock_key = KEYS[1]\nlocal unique_value = ARGV[1]\n\nif redis.call('get', lock_key) == unique_value then\nreturn redis.call('del', lock_key)\nelse\nreturn 0\nend\n"
)

func TestClassicScriptsShareTheLock(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		m, key := newMutex(t, b, time.Minute)
		classicLock, classicUnlock := redis.NewScript(classicLock), redis.NewScript(classicUnlock)

		// A classic script holds it: TryLock is refused, and our unlock never frees it.
		require.Equal(t, int64(1), classicLock.Run(ctx, b.Client, []string{key}, 60000, "classic-owner").Val())
		_, err := m.TryLock(ctx)
		assert.ErrorIs(t, err, lock.ErrNotObtained)
		assert.Equal(t, "classic-owner", b.Client.Get(ctx, key).Val())
		// A Lock that waits behind it leaves its value whole (it marks only
		// the tokens of this package's owners), so its own unlock frees it.
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err = m.Lock(short)
		cancel()
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, "classic-owner", b.Client.Get(ctx, key).Val(), "a waiter never marks another client's token")
		require.Equal(t, int64(1), classicUnlock.Run(ctx, b.Client, []string{key}, "classic-owner").Val())

		// A Mutex holds it: the classic lock is refused, its unlock with its own
		// value never frees ours.
		l, err := m.TryLock(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(0), classicLock.Run(ctx, b.Client, []string{key}, 60000, "classic-owner").Val())
		assert.Equal(t, int64(0), classicUnlock.Run(ctx, b.Client, []string{key}, "classic-owner").Val())
		assert.Equal(t, l.Token(), b.Client.Get(ctx, key).Val())
		require.NoError(t, l.Unlock(ctx))
		assert.Zero(t, b.Client.Exists(ctx, key).Val())
	})
}

func TestWrongTypeLeavesKeyUntouched(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		m, key := newMutex(t, b, time.Minute)
		require.NoError(t, b.Client.RPush(ctx, key, "x").Err())
		_, err := m.TryLock(ctx)
		require.Error(t, err)
		assert.False(t, errors.Is(err, lock.ErrNotObtained))
		assert.Contains(t, err.Error(), "WRONGTYPE")
		assert.Equal(t, []string{"x"}, b.Client.LRange(ctx, key, 0, -1).Val())
		assert.Equal(t, time.Duration(-1), b.Client.PTTL(ctx, key).Val(), "no expiry was set")
	})
}

// KeepAlive keeps the lock past its deadlines, each renewal's as well as
// the first one's, by the server's clock, and reports the loss when the
// key is gone. The TTL leaves a renewal a second of lateness, which a busy
// machine's scheduler does not reach.
func TestKeepAliveOutlivesTTLAndSignalsLoss(t *testing.T) {
	b := redistest.Redis(t)
	ctx := context.Background()
	const ttl = 1500 * time.Millisecond
	m, key := newMutex(t, b, ttl)
	l, err := m.TryLock(ctx)
	require.NoError(t, err)
	work := l.KeepAlive(ctx)
	deadline := expireTime(t, b, key)
	for i := range 2 {
		waitServerPast(t, b, deadline, 10*time.Second)
		assert.NoError(t, work.Err(), "kept alive past deadline %d", i)
		assert.Equal(t, l.Token(), b.Client.Get(ctx, key).Val(), "held past deadline %d", i)
		next := expireTime(t, b, key)
		assert.True(t, next.After(deadline), "renewed: deadline %d was %v, now %v", i, deadline, next)
		deadline = next
	}

	require.NoError(t, b.Client.Del(ctx, key).Err()) // broken by an operator
	select {
	case <-l.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("the loss was not signalled")
	}
	<-work.Done()
	assert.ErrorIs(t, context.Cause(work), lock.ErrNotHeld)
	assert.ErrorIs(t, l.Unlock(ctx), lock.ErrNotHeld)
}

func TestBadInputAndZeroValues(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	for _, cfg := range []lock.Config{
		{},
		{Key: "k", TTL: -time.Second},
		{Key: "k", TTL: time.Microsecond},
		{Key: "k", Replicas: -1},
		{Key: "k", ReplicaTimeout: -time.Second},
		{Key: "a}b"},
		{Key: "{t}:lock:q"},
		{Key: "{t}:x:lock:qd"},
		{Key: "{t}/lock:qw"},
		{Key: "{t}/recent"},          // a recent list's
		{Key: "{t}:x:ratelimit"},     // a GCRA limit's
		{Key: "{t}/delayqueue:dead"}, // a delay queue's
		{Key: "{k}/full:1"},          // a Limiter's full marker
		{Key: "{k}/w"},               // a Limiter's weights
		{Key: "{p:0}:redpacket:log"}, // a red packet store's log
	} {
		_, err := lock.New(b.Client, cfg)
		assert.ErrorIs(t, err, lock.ErrInvalidConfig, "%+v", cfg)
	}
	_, err := lock.New(nil, lock.Config{Key: "k"})
	assert.ErrorIs(t, err, lock.ErrInvalidConfig)
	var nilClient *redis.Client
	_, err = lock.New(nilClient, lock.Config{Key: "k"})
	assert.ErrorIs(t, err, lock.ErrInvalidConfig)

	var m *lock.Mutex
	_, err = m.TryLock(ctx)
	assert.ErrorIs(t, err, lock.ErrInvalidConfig)
	_, err = new(lock.Mutex).TryLock(ctx)
	assert.ErrorIs(t, err, lock.ErrInvalidConfig)

	// A nil or zero Lock: see TestLockNotMadeByMutexIsInvalid.
}

func TestRedisDownReturnsError(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer client.Close()
	m := newMutexOn(t, client, lock.Config{Key: "k"})
	_, err := m.TryLock(context.Background())
	require.Error(t, err)
	assert.False(t, errors.Is(err, lock.ErrNotObtained))
}
