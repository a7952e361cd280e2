package recent_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/recent"
)

// The promise on cost: an Add with neither TTL nor MaxAge runs four
// commands in its script, TIME, ZCOUNT, ZADD and ZREMRANGEBYRANK, and a
// TTL adds one PEXPIRE; making every write safe to send again added none.
// ZRANGE, which reads the newest score, runs only when an item already
// scores the server's microsecond or later, which these Adds, each in a
// microsecond of its own, never meet.
func TestAddCommands(t *testing.T) {
	s := redistest.StartServer(t)
	client := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { client.Close() })
	ctx := context.Background()
	const adds = 20
	for _, tc := range []struct {
		cfg  recent.Config
		want map[string]int64
	}{
		{recent.Config{Key: "recent-test:plain", Max: 5}, map[string]int64{"time": 1, "zcount": 1, "zadd": 1, "zremrangebyrank": 1}},
		{recent.Config{Key: "recent-test:ttl", Max: 5, TTL: 1 << 40}, map[string]int64{"time": 1, "zcount": 1, "zadd": 1, "zremrangebyrank": 1, "pexpire": 1}},
	} {
		l := newListOn(t, client, tc.cfg)
		require.NoError(t, l.Add(ctx, "warm"), "loads the script")
		require.NoError(t, client.ConfigResetStat(ctx).Err())
		for i := range adds {
			require.NoError(t, l.Add(ctx, fmt.Sprint("v", i)))
		}
		got := map[string]int64{}
		for _, line := range strings.Split(client.Info(ctx, "commandstats").Val(), "\n") {
			name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls=")
			if !ok || name == "evalsha" || name == "info" || name == "config|resetstat" {
				continue
			}
			calls, err := strconv.ParseInt(strings.SplitN(rest, ",", 2)[0], 10, 64)
			require.NoError(t, err, line)
			got[name] = calls / adds
			assert.Zero(t, calls%adds, "%s: %s ran a whole number of times per Add", tc.cfg, name)
		}
		assert.Equal(t, tc.want, got, "%s: commands per Add", tc.cfg)
	}
}
