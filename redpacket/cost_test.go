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

// A batch of Grabs runs the same five commands once, whatever its size.
// Each batch here queues behind a lone Grab, which the gate holds until
// they have: a lone Grab that takes a share and a batch of 8 who take
// shares each run the five; a lone Grab by a user who holds a claim runs
// HMGET, and a batch who hold claims or take the last share the five; a
// lone Grab and a batch of a sold-out packet run HMGET alone.
func TestGrabBatchCommands(t *testing.T) {
	s := redistest.StartServer(t)
	client := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { client.Close() })
	ctx := context.Background()
	store := mustNew(t, client)
	require.NoError(t, store.Create(ctx, redpacket.Packet{ID: "batch", Total: 1000, Count: 10}))
	require.NoError(t, redpacket.LoadScripts(ctx, client))
	g := newGate(client, "{redpacket:0}:redpacket:p:batch")
	users := make([]string, 8)
	for i := range users {
		users[i] = fmt.Sprint("u", i)
	}
	var answers []answer
	taking := scriptCommands(t, client, 1, func() {
		answers = crowd(t, store, g, "batch", "first", users)
	})
	for _, a := range answers {
		require.NoError(t, a.err)
	}
	assert.Equal(t, map[string]int64{"hmget": 2, "time": 2, "lpop": 2, "xadd": 2, "hset": 2}, taking, "a lone grab and a batch of 8, each taking shares")

	last := scriptCommands(t, client, 1, func() {
		answers = crowd(t, store, g, "batch", "first", append(users, "late0", "late1"))
	})
	refused := 0
	for _, a := range answers {
		if a.err != nil {
			require.ErrorIs(t, a.err, redpacket.ErrSoldOut, a.user)
			refused++
		}
	}
	assert.Equal(t, 1, refused, "late0 or late1, whichever queued second")
	assert.Equal(t, map[string]int64{"hmget": 2, "time": 1, "lpop": 1, "xadd": 1, "hset": 1}, last,
		"a lone grab that holds a claim, and a batch that takes the last share")

	soldOut := scriptCommands(t, client, 1, func() {
		answers = crowd(t, store, g, "batch", "late2", append(users, "late3"))
	})
	assert.Equal(t, map[string]int64{"hmget": 2}, soldOut, "a lone grab refused, and a batch of users who hold claims or are refused")
	assert.Equal(t, []int{1, 8, 1, 10, 1, 9}, g.Members())
}
