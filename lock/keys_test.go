package lock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// dumpKeys returns every key of the server whose name holds key, with its
// serialized value and whether it has an expiry.
func dumpKeys(t *testing.T, client redis.UniversalClient, key string) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := client.Keys(ctx, "*").Result()
	require.NoError(t, err)
	dump := map[string]string{}
	for _, k := range keys {
		if !strings.Contains(k, key) {
			continue
		}
		v, err := client.Dump(ctx, k).Result()
		require.NoError(t, err)
		dump[k] = v
	}
	return dump
}

// New refuses, as a lock's Key, the name of every key beside another
// lock (its queue), in both forms, so that a lock never meets a queue.
func TestNewRefusesAnotherLocksSideKeys(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	for _, suffix := range []string{"q", "qd", "qw"} {
		for _, key := range []string{lock.SideKey("orders", suffix), lock.SideKey("{orders}:x", suffix)} {
			_, err := lock.New(client, lock.Config{Key: key})
			assert.ErrorIs(t, err, lock.ErrInvalidConfig, key)
			assert.ErrorContains(t, err, key, "the error names the key")
		}
	}
	_, err := lock.New(client, lock.Config{Key: "{orders}:lock-q"})
	assert.NoError(t, err, "a key that only looks like one")
}

// A lock's side keys carry the package's name, beside the key, in its
// hash slot.
func TestSideKeysCarryThePackagesName(t *testing.T) {
	assert.Equal(t, "{orders}/lock:q", lock.SideKey("orders", "q"))
	assert.Equal(t, "{orders}:x:lock:qd", lock.SideKey("{orders}:x", "qd"))
	assert.NotEqual(t, lock.SideKey("{x}", "q"), lock.SideKey("x", "q"), "the keys beside \"{x}\" and \"x\" keep apart")
}

// A Limiter and a Mutex given the same key never touch each other's data:
// each call of one leaves every key the other wrote as it was, and
// answers as it would alone or with an error that wrote nothing.
func TestLimiterOnTheLocksKeyTouchesNothingOfIt(t *testing.T) {
	b := redistest.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	key := b.Key(t, "lock-test:shared:")
	m := newMutexOn(t, b.Client, lock.Config{Key: key, TTL: time.Minute})
	limiter, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute})
	require.NoError(t, err)

	// The lock is held, and a Lock waits in its queue.
	owner, err := m.TryLock(ctx)
	require.NoError(t, err)
	got := make(chan *lock.Lock, 1)
	go func() {
		l, err := m.Lock(ctx)
		assert.NoError(t, err)
		got <- l
	}()
	require.Eventually(t, func() bool {
		info, err := m.Inspect(ctx)
		return err == nil && info.Waiters == 1
	}, 5*time.Second, time.Millisecond)
	before := dumpKeys(t, b.Client, key)
	require.Contains(t, before, key)
	require.Contains(t, before, lock.SideKey(key, "q"))

	// The Limiter's calls either refuse the lock's string at the key (a
	// Redis error, nothing written) or keep their data elsewhere.
	res, err := limiter.TryAcquire(ctx, "holder")
	if err == nil {
		assert.True(t, res.Acquired, "the lock's data is not counted as holders")
		require.NoError(t, limiter.Release(ctx, "holder"))
	} else {
		assert.NotErrorIs(t, err, slotlimit.ErrOutcomeUnknown)
	}
	_, _ = limiter.Count(ctx)
	_, _ = limiter.Holders(ctx)
	if snap, err := limiter.Inspect(ctx); err == nil {
		assert.Empty(t, snap.Queue, "the lock's waiter is no Limiter's waiter")
	}
	info, err := m.Inspect(ctx)
	require.NoError(t, err)
	assert.Equal(t, owner.Token(), info.Token)
	assert.Equal(t, int64(1), info.Waiters)
	assert.Equal(t, before[key], dumpKeys(t, b.Client, key)[key], "the lock's string is as it was")

	// The lock is handed to its waiter, as if the Limiter were not there.
	require.NoError(t, owner.Unlock(ctx))
	var waiter *lock.Lock
	select {
	case waiter = <-got:
	case <-ctx.Done():
		t.Fatal("the waiter was not handed the lock")
	}
	require.NoError(t, waiter.Unlock(ctx))
	assert.Zero(t, b.Client.Exists(ctx, key, lock.SideKey(key, "q"), lock.SideKey(key, "qd")).Val())
}

// A Mutex on a Limiter's key touches nothing of the Limiter's: its calls
// fail with WRONGTYPE, or keep their data elsewhere, and every key the
// Limiter wrote is as it was.
func TestLockOnALimitersKeyTouchesNothingOfIt(t *testing.T) {
	b := redistest.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	key := b.Key(t, "lock-test:shared:")
	limiter, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute})
	require.NoError(t, err)
	res, err := limiter.TryAcquire(ctx, "holder")
	require.NoError(t, err)
	require.True(t, res.Acquired)
	before := dumpKeys(t, b.Client, key)
	require.NotEmpty(t, before)

	m := newMutexOn(t, b.Client, lock.Config{Key: key, TTL: time.Minute})
	tryCtx, tryCancel := context.WithTimeout(ctx, 2*time.Second)
	defer tryCancel()
	for name, call := range map[string]func() (*lock.Lock, error){
		"TryLock": func() (*lock.Lock, error) { return m.TryLock(ctx) },
		"Lock":    func() (*lock.Lock, error) { return m.Lock(tryCtx) },
	} {
		l, err := call()
		if err == nil {
			require.NoError(t, l.Unlock(ctx), name)
		} else {
			assert.NotErrorIs(t, err, lock.ErrOutcomeUnknown, name)
			assert.NotErrorIs(t, err, lock.ErrNotObtained, "%s: the Limiter's data is not an owner", name)
		}
	}
	_, _ = m.Inspect(ctx)
	err = m.Break(ctx, "holder")
	assert.Error(t, err, "a Limiter's holder is no lock owner")
	assert.NotErrorIs(t, err, lock.ErrOutcomeUnknown)
	after := dumpKeys(t, b.Client, key)
	for k, v := range before {
		assert.Equal(t, v, after[k], "the Limiter's key %q is as it was", k)
	}
	holders, err := limiter.Holders(ctx)
	require.NoError(t, err)
	require.Len(t, holders, 1)
	assert.Equal(t, "holder", holders[0].ID)
}
