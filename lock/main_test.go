package lock_test

import (
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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
