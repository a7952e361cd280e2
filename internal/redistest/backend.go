package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// A Backend is a Redis a test suite runs against, with a way to move its
// clock: miniredis, a real server, or a real Cluster.
type Backend struct {
	Name   string
	Client redis.UniversalClient
	Opts   redis.UniversalOptions // for more clients of the same server
	Real   bool

	// Advance moves the server's clock forward by d: miniredis jumps, a
	// real server is waited for.
	Advance func(d time.Duration)
	// Now is the server's clock.
	Now func() time.Time
}

// MiniredisStart is the fixed clock every miniredis Backend starts at, far
// from the local clock, so that a test reading the caller's clock fails.
var MiniredisStart = time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)

// Miniredis returns a Backend on a miniredis of its own, whose clock
// starts at MiniredisStart and moves only by Advance, TTLs with it.
func Miniredis(t *testing.T) *Backend {
	mr := miniredis.RunT(t)
	now := MiniredisStart
	mr.SetTime(now)
	mr.ClockTTL(true)
	opts := redis.UniversalOptions{Addrs: []string{mr.Addr()}}
	client := redis.NewUniversalClient(&opts)
	t.Cleanup(func() { client.Close() })
	return &Backend{
		Name:   "miniredis",
		Client: client,
		Opts:   opts,
		Advance: func(d time.Duration) {
			now = now.Add(d)
			mr.SetTime(now)
		},
		Now: func() time.Time { return now },
	}
}

// Redis returns a Backend on the shared real server (see Addr).
func Redis(t *testing.T) *Backend {
	return real(t, "redis", redis.UniversalOptions{Addrs: []string{Addr(t)}})
}

// RedisCluster returns a Backend on the shared 3-master, 3-replica Redis
// Cluster (see ClusterAddrs), through a cluster client.
func RedisCluster(t *testing.T) *Backend {
	return real(t, "cluster", redis.UniversalOptions{Addrs: ClusterAddrs(t)})
}

func real(t *testing.T, name string, opts redis.UniversalOptions) *Backend {
	client := redis.NewUniversalClient(&opts)
	t.Cleanup(func() { client.Close() })
	return &Backend{
		Name:    name,
		Client:  client,
		Opts:    opts,
		Real:    true,
		Advance: func(d time.Duration) { time.Sleep(d) },
		Now: func() time.Time {
			now, err := client.Time(context.Background()).Result()
			if err != nil {
				t.Fatalf("server time: %v", err)
			}
			return now
		},
	}
}

// EachBackend runs test against miniredis, a real Redis and a real Redis
// Cluster, each as a subtest named after it.
func EachBackend(t *testing.T, test func(t *testing.T, b *Backend)) {
	for _, backend := range []struct {
		name string
		make func(*testing.T) *Backend
	}{{"miniredis", Miniredis}, {"redis", Redis}, {"cluster", RedisCluster}} {
		t.Run(backend.name, func(t *testing.T) { test(t, backend.make(t)) })
	}
}

// NewClient returns another client of b's server, its options changed by
// tweaks, closed when t ends.
func (b *Backend) NewClient(t *testing.T, tweaks ...func(*redis.UniversalOptions)) redis.UniversalClient {
	opts := b.Opts
	for _, tweak := range tweaks {
		tweak(&opts)
	}
	client := redis.NewUniversalClient(&opts)
	t.Cleanup(func() { client.Close() })
	return client
}

// Key returns a key no other test uses, beginning with prefix, and deleted
// when t ends.
func (b *Backend) Key(t *testing.T, prefix string) string {
	var buf [6]byte
	rand.Read(buf[:])
	key := prefix + t.Name() + ":" + hex.EncodeToString(buf[:])
	t.Cleanup(func() { b.Client.Del(context.Background(), key) })
	return key
}
