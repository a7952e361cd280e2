package slotlimit_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// The commonest calls run only the commands their promises need, each
// once (see scripts/acquire.lua and scripts/release.lua): a grant of one
// unit, at a key with no weighted holder and no full marker, reads the
// marker, the weights and the clock, prunes lapsed leases, counts, adds
// the lease and makes the key outlive it; its release looks for a weight,
// a marker or a queue, reads the clock, prunes and removes the lease; and
// a refusal by the marker reads it and the caller's own lease. Counted by
// INFO commandstats, which counts the commands a script runs, on a server
// of the test's own.
func TestCommonestCallsRunTheirCommands(t *testing.T) {
	srv := redistest.StartServer(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { client.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := slotlimit.New(client, slotlimit.Config{Key: "commands", Limit: 2, TTL: time.Minute})
	require.NoError(t, err)

	// A first call of each script may meet NOSCRIPT and run by EVAL.
	_, err = l.TryAcquire(ctx, "warm")
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx, "warm"))

	commands := func(call func()) map[string]int64 {
		t.Helper()
		require.NoError(t, client.ConfigResetStat(ctx).Err())
		call()
		info, err := client.Info(ctx, "commandstats").Result()
		require.NoError(t, err)
		return commandCalls(t, info)
	}
	grant := func(holder string) {
		res, err := l.TryAcquire(ctx, holder)
		require.NoError(t, err)
		require.True(t, res.Acquired, holder)
	}

	assert.Equal(t, map[string]int64{
		"evalsha": 1, "pttl": 1, "hget": 1, "time": 1,
		"zremrangebyscore": 1, "zcard": 1, "zadd": 1, "pexpireat": 1,
	}, commands(func() { grant("a") }), "a grant")
	assert.Equal(t, map[string]int64{
		"evalsha": 1, "exists": 1, "time": 1, "zremrangebyscore": 1, "zrem": 1,
	}, commands(func() { require.NoError(t, l.Release(ctx, "a")) }), "its release")

	grant("a")
	grant("b") // fills the key and sets the marker
	assert.Equal(t, map[string]int64{"evalsha": 1, "pttl": 1, "zscore": 1}, commands(func() {
		res, err := l.TryAcquire(ctx, "c")
		require.NoError(t, err)
		require.False(t, res.Acquired)
	}), "a refusal by the full marker")
}

// commandCalls reads the calls of each command from INFO commandstats,
// leaving out those of the test's own reading and of go-redis's
// connection setup.
func commandCalls(t *testing.T, info string) map[string]int64 {
	t.Helper()
	calls := make(map[string]int64)
	for _, line := range strings.Split(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, isStat := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isStat {
			continue
		}
		switch name {
		case "config|resetstat", "info", "hello", "client|setinfo", "ping":
			continue
		}
		field, _, _ := strings.Cut(stats, ",")
		n, err := strconv.ParseInt(strings.TrimPrefix(field, "calls="), 10, 64)
		require.NoError(t, err, line)
		calls[name] = n
	}
	return calls
}
