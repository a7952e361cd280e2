package slotlimit_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.Shutdown()
	os.Exit(code)
}

// A backend is a Redis the suite runs against, with a way to move its clock.
type backend struct {
	client redis.UniversalClient
	opts   redis.UniversalOptions // for more clients of the same server
	real   bool

	// advance moves the server's clock forward by d: miniredis jumps,
	// a real server is waited for.
	advance func(d time.Duration)
	// now is the server's clock.
	now func() time.Time
}

// miniredisStart is the fixed clock every miniredis backend starts at,
// far from the local clock so that a test reading the caller's clock fails.
var miniredisStart = time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)

func newMiniredis(t *testing.T) *backend {
	mr := miniredis.RunT(t)
	now := miniredisStart
	mr.SetTime(now)
	mr.ClockTTL(true)
	opts := redis.UniversalOptions{Addrs: []string{mr.Addr()}}
	client := redis.NewUniversalClient(&opts)
	t.Cleanup(func() { client.Close() })
	return &backend{
		client: client,
		opts:   opts,
		advance: func(d time.Duration) {
			now = now.Add(d)
			mr.SetTime(now)
		},
		now: func() time.Time { return now },
	}
}

func newRealRedis(t *testing.T) *backend {
	return newRealBackend(t, redis.UniversalOptions{Addrs: []string{redistest.Addr(t)}})
}

// newRedisCluster is a 3-master, 3-replica Redis Cluster, reached through
// a cluster client.
func newRedisCluster(t *testing.T) *backend {
	return newRealBackend(t, redis.UniversalOptions{Addrs: redistest.ClusterAddrs(t)})
}

func newRealBackend(t *testing.T, opts redis.UniversalOptions) *backend {
	client := redis.NewUniversalClient(&opts)
	t.Cleanup(func() { client.Close() })
	return &backend{
		client:  client,
		opts:    opts,
		real:    true,
		advance: func(d time.Duration) { time.Sleep(d) },
		now: func() time.Time {
			now, err := client.Time(context.Background()).Result()
			require.NoError(t, err)
			return now
		},
	}
}

// eachBackend runs test against miniredis, a real Redis, and a real Redis
// Cluster.
func eachBackend(t *testing.T, test func(t *testing.T, b *backend)) {
	t.Run("miniredis", func(t *testing.T) { test(t, newMiniredis(t)) })
	t.Run("redis", func(t *testing.T) { test(t, newRealRedis(t)) })
	t.Run("cluster", func(t *testing.T) { test(t, newRedisCluster(t)) })
}

// newClient returns another client of b's server, its options changed by
// tweaks.
func newClient(t *testing.T, b *backend, tweaks ...func(*redis.UniversalOptions)) redis.UniversalClient {
	opts := b.opts
	for _, tweak := range tweaks {
		tweak(&opts)
	}
	client := redis.NewUniversalClient(&opts)
	t.Cleanup(func() { client.Close() })
	return client
}

// storedKeys returns those of the keys of a Limiter for key and limit
// that exist: the lease set and the keys beside it (see keys.go).
func storedKeys(t *testing.T, b *backend, key string, limit int64) []string {
	t.Helper()
	stored := []string{}
	names := []string{key}
	for _, suffix := range []string{"w", "full:" + strconv.FormatInt(limit, 10), "q", "qd", "qw"} {
		names = append(names, "{"+key+"}/"+suffix)
	}
	for _, k := range names {
		n, err := b.client.Exists(context.Background(), k).Result()
		require.NoError(t, err)
		if n == 1 {
			stored = append(stored, k)
		}
	}
	return stored
}

// testKey returns a key no other test uses, deleted when t ends.
func testKey(t *testing.T, b *backend) string {
	var buf [6]byte
	rand.Read(buf[:])
	key := "slotlimit-test:" + t.Name() + ":" + hex.EncodeToString(buf[:])
	t.Cleanup(func() { b.client.Del(context.Background(), key) })
	return key
}
