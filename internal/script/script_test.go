package script_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/script"
)

var lib = script.Lib{Include: "-- #include lib.lua\n", Source: "local function incr(k) return redis.call('INCR', k) end\n"}

// incr increments KEYS[1] and returns its new value.
var incr = script.New("-- incr\n-- #include lib.lua\nreturn incr(KEYS[1])\n", lib)

func newClient(t *testing.T) *redis.Client {
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { client.Close() })
	return client
}

func TestNewSplicesLibAtItsIncludeLine(t *testing.T) {
	ctx := context.Background()
	n, err := incr.Run(ctx, newClient(t), []string{"k"}).Int64()
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	assert.Equal(t, redis.NewScript("-- incr\n"+lib.Source+"return incr(KEYS[1])\n").Hash(), incr.Hash())
	assert.Equal(t, redis.NewScript("return 1").Hash(), script.New("return 1").Hash(), "a script without libs is its source")
}

func TestNewPanicsUnlessIncludeLineIsThereOnce(t *testing.T) {
	for _, src := range []string{"return 1\n", "-- #include lib.lua\n-- #include lib.lua\nreturn 1\n", "--  #include lib.lua\nreturn 1\n"} {
		assert.Panics(t, func() { script.New(src, lib) }, "%q", src)
	}
}

// A pipelineHook lets a test see and rewrite the pipelines a client sends.
type pipelineHook func(ctx context.Context, cmds []redis.Cmder, next redis.ProcessPipelineHook) error

func (h pipelineHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h pipelineHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h pipelineHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { return h(ctx, cmds, next) }
}

// Only the calls of a pipeline that met NOSCRIPT are sent again, by EVAL,
// in order, so each call runs once.
func TestPipelineResendsOnlyNoScriptCalls(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	require.NoError(t, incr.Load(ctx, client).Err())
	var mu sync.Mutex
	var sent [][]string
	pipelines := 0
	client.AddHook(pipelineHook(func(ctx context.Context, cmds []redis.Cmder, next redis.ProcessPipelineHook) error {
		mu.Lock()
		pipelines++
		first := pipelines == 1
		var names []string
		for _, cmd := range cmds {
			names = append(names, fmt.Sprint(cmd.Name(), " ", cmd.Args()[4]))
		}
		sent = append(sent, names)
		mu.Unlock()
		if !first {
			return next(ctx, cmds)
		}
		// The server met NOSCRIPT on calls 1 and 3 (their script was
		// flushed): they do not run.
		cmds[1].SetErr(redis.ErrNoScript)
		cmds[3].SetErr(redis.ErrNoScript)
		return next(ctx, []redis.Cmder{cmds[0], cmds[2]})
	}))
	r := script.Runner{Client: client}
	calls := [][]any{{"a"}, {"b"}, {"c"}, {"d"}}
	cmds, err := r.Pipeline(ctx, incr, []string{"n"}, calls)
	require.NoError(t, err)
	var got []int64
	for _, cmd := range cmds {
		n, err := cmd.Int64()
		require.NoError(t, err)
		got = append(got, n)
	}
	assert.Equal(t, []int64{1, 3, 2, 4}, got, "calls 0 and 2 ran first, then 1 and 3 by EVAL, in order")
	assert.Equal(t, [][]string{{"evalsha a", "evalsha b", "evalsha c", "evalsha d"}, {"eval b", "eval d"}}, sent)
}

// A flushed script cache costs each pipeline no call and runs none twice.
func TestPipelineAfterScriptFlush(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	r := script.Runner{Client: client}
	for round := range 3 {
		require.NoError(t, client.ScriptFlush(ctx).Err())
		cmds, err := r.Pipeline(ctx, incr, []string{"n"}, [][]any{{}, {}, {}})
		require.NoError(t, err)
		for i, cmd := range cmds {
			n, err := cmd.Int64()
			require.NoError(t, err)
			assert.Equal(t, int64(3*round+i+1), n, "round %d call %d", round, i)
		}
	}
}

// An error reply stays with its call; the others run.
func TestPipelineKeepsErrorRepliesWithTheirCalls(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	require.NoError(t, client.Set(ctx, "s", "x", 0).Err())
	cmds, err := (&script.Runner{Client: client}).Pipeline(ctx, incr, []string{"s"}, [][]any{{}})
	require.NoError(t, err)
	var reply redis.Error
	assert.True(t, errors.As(cmds[0].Err(), &reply), "%v", cmds[0].Err())
}

// With Replicas, a write the replicas do not acknowledge fails with an
// error that wraps NotReplicated, one call or many; miniredis has none.
func TestRunnerWaitsForReplicas(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	errNotReplicated := errors.New("not replicated")
	r := script.Runner{Client: client, Replicas: 1, ReplicaTimeout: 10 * time.Millisecond, NotReplicated: errNotReplicated}
	err := r.Run(ctx, incr, []string{"n"}).Err()
	assert.ErrorIs(t, err, errNotReplicated)
	assert.EqualError(t, err, "not replicated: 0 of 1")
	_, err = r.Pipeline(ctx, incr, []string{"n"}, [][]any{{}, {}})
	assert.ErrorIs(t, err, errNotReplicated)
	n, err := client.Get(ctx, "n").Int64()
	require.NoError(t, err)
	assert.Equal(t, int64(3), n, "the writes were made on the master")

	r.Replicas = 0
	assert.NoError(t, r.Run(ctx, incr, []string{"n"}).Err(), "no WAIT without Replicas")
}

// Load splices in the files a script includes, and the Libs it is given
// in their place.
func TestLoadIncludes(t *testing.T) {
	fsys := fstest.MapFS{
		"s/a.lua":   {Data: []byte("-- #include lib.lua\n-- #include ext.lua\nreturn f()\n")},
		"s/lib.lua": {Data: []byte("local function f() return 1 end\n")},
	}
	s := script.Load(fsys, "s/a.lua", script.Lib{Include: "-- #include ext.lua\n", Source: "-- ext\n"})
	assert.Equal(t, "local function f() return 1 end\n-- ext\nreturn f()\n", script.Source(s))
	assert.Panics(t, func() { script.Load(fsys, "s/missing.lua") })
}
