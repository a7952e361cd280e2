package redpacket_test

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
	"github.com/slotlimit/slotlimit/redpacket"
)

// scriptCommands runs calls, each run a times, on client after CONFIG
// RESETSTAT, and returns the commands the scripts ran, per run.
func scriptCommands(t *testing.T, client *redis.Client, runs int, calls func()) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, client.ConfigResetStat(ctx).Err())
	calls()
	got := map[string]int64{}
	for _, line := range strings.Split(client.Info(ctx, "commandstats").Val(), "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls=")
		if !ok || name == "evalsha" || name == "info" || name == "config|resetstat" {
			continue
		}
		n, err := strconv.ParseInt(strings.SplitN(rest, ",", 2)[0], 10, 64)
		require.NoError(t, err, line)
		assert.Zero(t, n%int64(runs), "%s ran a whole number of times per call", name)
		got[name] = n / int64(runs)
	}
	return got
}

// The promise on cost: a Grab that takes a share runs five commands in
// its script, HMGET, TIME, LPOP, XADD and HSET, once each; a Grab by a
// user who holds a claim, and one of a sold-out packet, run HMGET alone.
func TestGrabCommands(t *testing.T) {
	s := redistest.StartServer(t)
	client := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { client.Close() })
	ctx := context.Background()
	store := mustNew(t, client)
	const grabs = 20
	require.NoError(t, store.Create(ctx, redpacket.Packet{ID: "cost", Total: 1000, Count: grabs + 1}))
	_, err := store.Grab(ctx, "cost", "warm")
	require.NoError(t, err, "loads the script")

	taking := scriptCommands(t, client, grabs, func() {
		for i := range grabs {
			_, err := store.Grab(ctx, "cost", fmt.Sprint("u", i))
			require.NoError(t, err)
		}
	})
	assert.Equal(t, map[string]int64{"hmget": 1, "time": 1, "lpop": 1, "xadd": 1, "hset": 1}, taking, "a grab that takes a share")

	again := scriptCommands(t, client, grabs, func() {
		for i := range grabs {
			_, err := store.Grab(ctx, "cost", fmt.Sprint("u", i))
			require.NoError(t, err)
		}
	})
	assert.Equal(t, map[string]int64{"hmget": 1}, again, "a grab by a user who holds a claim")

	soldOut := scriptCommands(t, client, grabs, func() {
		for i := range grabs {
			_, err := store.Grab(ctx, "cost", fmt.Sprint("late", i))
			require.ErrorIs(t, err, redpacket.ErrSoldOut)
		}
	})
	assert.Equal(t, map[string]int64{"hmget": 1}, soldOut, "a grab of a sold-out packet")
}
