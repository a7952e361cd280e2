package slotlimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/loopback"
	"github.com/slotlimit/slotlimit/lock"
	"github.com/slotlimit/slotlimit/ratelimit"
	"github.com/slotlimit/slotlimit/recent"
	"github.com/slotlimit/slotlimit/redpacket"
)

// downCleanupBound is the most a failed call takes past its deadline to
// free what it may hold, as the docs state (a second), with room for a
// loaded machine: the check is against gross failure.
const downCleanupBound = 3 * time.Second

// With Redis down, a call of any package that never reached a server
// (every dial was refused) sent nothing, so its error does not match
// ErrOutcomeUnknown: with the client's defaults (go-redis's own retries),
// ContextTimeoutEnabled, and a deadline that passes while the tries run
// or after they gave up. Every call returns by its deadline plus the
// cleanup's bound.
func TestRedisDownCallsThatSentNothingAreNotUnknown(t *testing.T) {
	addr, err := loopback.FreeAddr() // nothing listens there
	require.NoError(t, err)
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })

	limiter, err := slotlimit.New(client, slotlimit.Config{Key: "down:limiter", Limit: 2})
	require.NoError(t, err)
	mutex, err := lock.New(client, lock.Config{Key: "down:lock"})
	require.NoError(t, err)
	rates, err := ratelimit.New(client, ratelimit.Config{})
	require.NoError(t, err)
	queue, err := delayqueue.New(client, delayqueue.Config{Key: "down:queue"})
	require.NoError(t, err)
	packets, err := redpacket.New(client, redpacket.Config{})
	require.NoError(t, err)
	list, err := recent.New(client, recent.Config{Key: "down:recent", Max: 10})
	require.NoError(t, err)
	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"TryAcquire", func(ctx context.Context) error { _, err := limiter.TryAcquire(ctx, "h"); return err }},
		{"Acquire", func(ctx context.Context) error { _, err := limiter.Acquire(ctx, "h"); return err }},
		{"Release", func(ctx context.Context) error { return limiter.Release(ctx, "h") }},
		{"TryLock", func(ctx context.Context) error { _, err := mutex.TryLock(ctx); return err }},
		{"Lock", func(ctx context.Context) error { _, err := mutex.Lock(ctx); return err }},
		{"Allow", func(ctx context.Context) error {
			_, err := rates.Allow(ctx, "down:rate", ratelimit.PerSecond(10))
			return err
		}},
		{"Push", func(ctx context.Context) error { _, err := queue.Push(ctx, []byte("m"), 0); return err }},
		{"Grab", func(ctx context.Context) error { _, err := packets.Grab(ctx, "p", "u"); return err }},
		{"Add", func(ctx context.Context) error { return list.Add(ctx, "v") }},
	}
	for _, timeout := range []time.Duration{5 * time.Millisecond, 20 * time.Millisecond, 500 * time.Millisecond} {
		for _, c := range calls {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			start := time.Now()
			err := c.call(ctx)
			took := time.Since(start)
			cancel()
			require.Error(t, err, c.name)
			assert.NotErrorIs(t, err, slotlimit.ErrOutcomeUnknown, "%s, %v deadline: a refused dial sent nothing: %v", c.name, timeout, err)
			assert.Less(t, took, timeout+downCleanupBound, "%s, %v deadline: returns by its deadline and the cleanup's bound", c.name, timeout)
		}
	}
}
