package recent_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/recent"
)

// New refuses a Max, TTL or MaxAge that Lua's numbers or Redis cannot use
// exactly, so no call can fail on one half-way.
func TestNewRefusesWhatTheScriptsCannotUse(t *testing.T) {
	b := redistest.Redis(t)
	for i, cfg := range []recent.Config{
		{Max: 1e17},
		{Max: recent.MaxItems + 1},
		{Max: math.MaxInt64},
		{Max: 3, TTL: math.MaxInt64},
		{Max: 3, TTL: recent.MaxDuration + time.Millisecond},
		{Max: 3, MaxAge: math.MaxInt64},
		{Max: 3, MaxAge: recent.MaxDuration + time.Millisecond},
	} {
		cfg.Key = b.Key(t, "recent-test:")
		l, err := recent.New(b.Client, cfg)
		assert.ErrorIs(t, err, recent.ErrInvalidConfig, "step %d: %v", i, cfg)
		assert.Nil(t, l, "step %d", i)
	}
}

// Every call works at the largest Max, TTL and MaxAge New takes, and at
// Maxes whose rank bound Lua would print in exponent form: all of a call
// happens, the expiry included.
func TestExtremeConfigsWorkWhole(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		for i, cfg := range []recent.Config{
			{Max: recent.MaxItems, TTL: recent.MaxDuration, MaxAge: recent.MaxDuration},
			{Max: recent.MaxItems, TTL: time.Hour},
			{Max: 9e15, TTL: time.Hour, MaxAge: time.Hour},
			{Max: 1e15 + 1, TTL: time.Hour},
			{Max: 123456789012345, TTL: time.Hour},
			{Max: 1e14, TTL: time.Hour},
			{Max: 3, TTL: recent.MaxDuration},
			{Max: 3, MaxAge: recent.MaxDuration},
		} {
			l := newList(t, b, cfg)
			key := recent.DataKey(l)
			require.NoError(t, l.Add(ctx, "a", "b", "c"), "step %d: %v", i, cfg)
			assert.Equal(t, []string{"c", "b", "a"}, values(t, l), "step %d", i)
			n, err := l.Len(ctx)
			require.NoError(t, err, "step %d", i)
			assert.Equal(t, int64(3), n, "step %d: Len", i)
			assert.Positive(t, b.Client.PTTL(ctx, key).Val(), "step %d: the Add set the expiry", i)
			n, err = l.Remove(ctx, "b", "x")
			require.NoError(t, err, "step %d", i)
			assert.Equal(t, int64(1), n, "step %d: removed", i)
			assert.Equal(t, []string{"c", "a"}, values(t, l), "step %d", i)
			items, err := l.Items(ctx, 1, cfg.Max)
			require.NoError(t, err, "step %d", i)
			require.Len(t, items, 1, "step %d", i)
			assert.Equal(t, "a", items[0].Value, "step %d", i)
		}
	})
}

// An Add that Redis refuses for lack of memory writes nothing, neither
// its values nor an expiry: the script's first write is the ZADD, which
// Redis refuses, and none can fail after it.
func TestAddRefusedForMemoryWritesNothing(t *testing.T) {
	s := redistest.StartServer(t, "--maxmemory-policy", "noeviction")
	client := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { client.Close() })
	ctx := context.Background()
	l := newListOn(t, client, recent.Config{Key: "recent-test:oom", Max: 3, TTL: time.Hour, MaxAge: time.Hour})
	fresh := newListOn(t, client, recent.Config{Key: "recent-test:oom-fresh", Max: 3, TTL: time.Hour})
	require.NoError(t, l.Add(ctx, "a"))
	require.NoError(t, client.Persist(ctx, recent.DataKey(l)).Err(), "so that an expiry set by Add would show")

	require.NoError(t, client.ConfigSet(ctx, "maxmemory", "1").Err())
	err := l.Add(ctx, "b", "c")
	require.ErrorContains(t, err, "OOM")
	assertNamesMethodOnce(t, err, "add", "OOM")
	require.ErrorContains(t, fresh.Add(ctx, "x"), "OOM")
	require.NoError(t, client.ConfigSet(ctx, "maxmemory", "0").Err())

	assert.Equal(t, []string{"a"}, values(t, l))
	assert.Equal(t, time.Duration(-1), client.TTL(ctx, recent.DataKey(l)).Val(), "no expiry was set")
	assert.Zero(t, client.Exists(ctx, recent.DataKey(fresh)).Val(), "no key was made")
}
