package lock_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.Shutdown()
	os.Exit(code)
}

// newMutex returns a Mutex for a key of the test's own on b, with ttl.
func newMutex(t *testing.T, b *redistest.Backend, ttl time.Duration) (*lock.Mutex, string) {
	t.Helper()
	key := b.Key(t, "lock-test:")
	return newMutexOn(t, b.Client, lock.Config{Key: key, TTL: ttl}), key
}

func newMutexOn(t *testing.T, client redis.UniversalClient, cfg lock.Config) *lock.Mutex {
	t.Helper()
	m, err := lock.New(client, cfg)
	require.NoError(t, err)
	return m
}

// expireTime returns the deadline of key on the server's clock, by
// PEXPIRETIME, failing t when the key is gone or has none.
func expireTime(t *testing.T, b *redistest.Backend, key string) time.Time {
	t.Helper()
	ms, err := b.Client.PExpireTime(context.Background(), key).Result()
	require.NoError(t, err)
	require.Positive(t, ms, "%s has a deadline (-2: gone, -1: none)", key)
	return time.UnixMilli(int64(ms / time.Millisecond))
}

// waitServerPast returns once the server's clock is past when: on
// miniredis it moves the clock there, on a real server it waits, failing
// t if that takes longer than within.
func waitServerPast(t *testing.T, b *redistest.Backend, when time.Time, within time.Duration) {
	t.Helper()
	if !b.Real {
		if now := b.Now(); !now.After(when) {
			b.Advance(when.Sub(now) + time.Millisecond)
		}
		return
	}
	give := time.Now().Add(within)
	for {
		now := b.Now()
		if now.After(when) {
			return
		}
		if time.Now().After(give) {
			t.Fatalf("the server's clock is at %v, not past %v, after %v", now, when, within)
		}
		time.Sleep(min(when.Sub(now)+time.Millisecond, 50*time.Millisecond))
	}
}

// assertLeaseAtMost checks that key lapses within ttl on the server's
// clock: it has a PTTL of at most ttl, or it is gone already, which only a
// server clock ttl past before, read before the lease was taken, allows.
func assertLeaseAtMost(t *testing.T, b *redistest.Backend, key string, ttl time.Duration, before time.Time, label string) {
	t.Helper()
	pttl, err := b.Client.PTTL(context.Background(), key).Result()
	require.NoError(t, err, label)
	if pttl == -2 { // gone: lapsed already, on a busy machine
		now := b.Now()
		assert.GreaterOrEqual(t, now.Sub(before), ttl, "%s: gone before its lease's end (read at %v, taken after %v)", label, now, before)
		return
	}
	assert.True(t, pttl > 0 && pttl <= ttl, "%s: PTTL %v, want (0, %v]", label, pttl, ttl)
}
