package slotlimit_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.Shutdown()
	os.Exit(code)
}

// A backend is a Redis the suite runs against, with a way to move its
// clock (see redistest.Backend).
type backend = redistest.Backend

// miniredisStart is the fixed clock every miniredis backend starts at.
var miniredisStart = redistest.MiniredisStart

func newMiniredis(t *testing.T) *backend { return redistest.Miniredis(t) }

func newRealRedis(t *testing.T) *backend { return redistest.Redis(t) }

// newRedisCluster is a 3-master, 3-replica Redis Cluster, reached through
// a cluster client.
func newRedisCluster(t *testing.T) *backend { return redistest.RedisCluster(t) }

// eachBackend runs test against miniredis, a real Redis, and a real Redis
// Cluster.
func eachBackend(t *testing.T, test func(t *testing.T, b *backend)) {
	redistest.EachBackend(t, test)
}

// newClient returns another client of b's server, its options changed by
// tweaks.
func newClient(t *testing.T, b *backend, tweaks ...func(*redis.UniversalOptions)) redis.UniversalClient {
	return b.NewClient(t, tweaks...)
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
		n, err := b.Client.Exists(context.Background(), k).Result()
		require.NoError(t, err)
		if n == 1 {
			stored = append(stored, k)
		}
	}
	return stored
}

// testKey returns a key no other test uses, deleted when t ends.
func testKey(t *testing.T, b *backend) string {
	return b.Key(t, "slotlimit-test:")
}

// waitServerPast returns once b's clock is past when: on miniredis it
// moves the clock there, on a real server it waits, failing t if that
// takes longer than within.
func waitServerPast(t *testing.T, b *backend, when time.Time, within time.Duration) {
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

// holderDeadline returns when holder's lease under l lapses, by the
// server's clock, failing t if holder holds nothing.
func holderDeadline(t *testing.T, l *slotlimit.Limiter, holder string) time.Time {
	t.Helper()
	hs, err := l.Holders(context.Background())
	require.NoError(t, err)
	for _, h := range hs {
		if h.ID == holder {
			return h.ExpiresAt
		}
	}
	t.Fatalf("%s holds nothing: %v", holder, hs)
	return time.Time{}
}
