package ratelimit_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// calls counts the script calls and SETs a client sends, not the
// commands that open a connection.
type calls struct{ n atomic.Int64 }

func (c *calls) count(cmd redis.Cmder) {
	switch cmd.Name() {
	case "evalsha", "eval", "set":
		c.n.Add(1)
	}
}

func (c *calls) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *calls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.count(cmd)
		return next(ctx, cmd)
	}
}
func (c *calls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}

// aclUser makes a Redis user on s granted rules (key patterns and
// commands), and returns a client of it that counts its script calls and
// SETs, with the package's scripts already cached, so that each script
// call is one EVALSHA.
func aclUser(t *testing.T, s *redistest.Server, name string, rules ...string) (*redis.Client, *calls) {
	t.Helper()
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { admin.Close() })
	require.NoError(t, ratelimit.LoadScripts(ctx, admin))
	args := []any{"ACL", "SETUSER", name, "reset", "on", ">pw"}
	for _, r := range rules {
		args = append(args, r)
	}
	require.NoError(t, admin.Do(ctx, args...).Err())
	user := redis.NewClient(&redis.Options{Addr: s.Addr, Username: name, Password: "pw"})
	t.Cleanup(func() { user.Close() })
	commands := &calls{}
	user.AddHook(commands)
	return user, commands
}

// The commands a user of Allow needs, of both algorithms.
var allowCommands = []string{"+evalsha", "+eval", "+time", "+get", "+set", "+del", "+incrby", "+pexpire", "+pttl", "+ping"}

// A FixedWindow limit counts at the key it is given, and docs/security.md
// says ratelimit uses "the keys given": a user whose ACL grants exactly
// those keys ran Allow before the rate record came. The record, written
// inside the call's own script, names a key beside it that such an ACL
// does not grant; its write must not fail the call.
func TestFixedWindowAllowUnderKeysGivenACL(t *testing.T) {
	s := redistest.StartServer(t)
	ctx := context.Background()
	user, _ := aclUser(t, s, "rl", append([]string{"~rl:*"}, allowCommands...)...)

	l, err := ratelimit.New(user, ratelimit.Config{DisableCoalescing: true})
	require.NoError(t, err)
	limit := ratelimit.Limit{Algorithm: ratelimit.FixedWindow, Rate: 10, Period: time.Minute}
	for i := range 3 {
		_, err := l.Allow(ctx, "rl:user1", limit)
		require.NoError(t, err, "call %d", i)
	}
}

// Under an ACL that grants a call's keys but not its rate record, each
// Allow and AllowN, of either algorithm, alone or coalesced, counts
// exactly once: the call Redis refused for the record's key ran nothing,
// and is sent again at once without it. The refused record then waits
// its minute, so that it costs one script call more a minute per key,
// not one a call. No record is written.
func TestRecordRefusedByACLNeverFailsAllow(t *testing.T) {
	s := redistest.StartServer(t)
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { admin.Close() })
	// The keys given and a GCRA's data beside them, not the records.
	user, commands := aclUser(t, s, "rl", append([]string{"~rl:*", "~{rl:*}/ratelimit"}, allowCommands...)...)

	for j, limit := range []ratelimit.Limit{
		{Rate: 10, Period: time.Hour},
		{Rate: 7, Period: time.Hour, Burst: 10}, // a share of the period that is no whole µs
		{Rate: 10, Period: time.Hour, Algorithm: ratelimit.FixedWindow},
	} {
		for _, coalesce := range []bool{false, true} {
			l, err := ratelimit.New(user, ratelimit.Config{DisableCoalescing: !coalesce})
			require.NoError(t, err)
			key := fmt.Sprintf("rl:%d:coalesce=%v", j, coalesce)
			name := ratelimit.RecordKey(key)
			for i, want := range []int64{2, 1, 1} {
				before := commands.n.Load()
				res, err := l.Allow(ctx, key, limit)
				require.NoError(t, err, "%v %s: call %d", limit, key, i)
				assert.True(t, res.Allowed, "%v %s: call %d", limit, key, i)
				assert.EqualValues(t, 10-(i+1), res.Remaining, "%v %s: call %d counted once", limit, key, i)
				assert.Equal(t, want, commands.n.Load()-before, "%v %s: call %d's script calls", limit, key, i)
			}
			ratelimit.RecordDueNow(l, key) // a minute on
			before := commands.n.Load()
			res, err := l.AllowN(ctx, key, limit, 2)
			require.NoError(t, err)
			assert.EqualValues(t, 5, res.Remaining, "%v %s: counted once", limit, key)
			assert.EqualValues(t, 2, commands.n.Load()-before, "%v %s: tried again a minute on", limit, key)
			assert.Zero(t, admin.Exists(ctx, name).Val(), "%v %s: no record written", limit, key)
		}
	}
}

// A batch of coalesced calls carries the rate record as a single call
// does, and a refusal of it sends the batch again at once without it:
// every call of the batch is decided once.
func TestRecordRefusedByACLNeverFailsBatch(t *testing.T) {
	s := redistest.StartServer(t)
	ctx := context.Background()
	user, commands := aclUser(t, s, "rl", append([]string{"~rl:*", "~{rl:*}/ratelimit"}, allowCommands...)...)
	l, err := ratelimit.New(user, ratelimit.Config{})
	require.NoError(t, err)

	for _, limit := range []ratelimit.Limit{
		{Rate: 10, Period: time.Hour},
		{Rate: 10, Period: time.Hour, Algorithm: ratelimit.FixedWindow},
	} {
		key := "rl:batch:" + limit.Algorithm.String()
		before := commands.n.Load()
		results, err := l.AllowBatch(ctx, key, limit, 1, 4)
		require.NoError(t, err, "%v", limit)
		require.Len(t, results, 4)
		for i, res := range results {
			assert.True(t, res.Allowed, "%v: call %d", limit, i)
			assert.EqualValues(t, 10-(i+1), res.Remaining, "%v: call %d", limit, i)
		}
		assert.EqualValues(t, 2, commands.n.Load()-before, "%v: refused once, then sent without the record", limit)

		before = commands.n.Load()
		results, err = l.AllowBatch(ctx, key, limit, 1, 2)
		require.NoError(t, err, "%v", limit)
		assert.EqualValues(t, 4, results[1].Remaining, "%v", limit)
		assert.EqualValues(t, 1, commands.n.Load()-before, "%v: the record waits its minute", limit)
	}
}

// AllowAll writes the rate records with SETs of their own before its
// script: a SET that Redis refuses does not fail it, and waits its minute.
func TestRecordRefusedByACLNeverFailsAllowAll(t *testing.T) {
	s := redistest.StartServer(t)
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { admin.Close() })
	// Exactly the data keys, a GCRA's beside rl:{t}:a and a FixedWindow's
	// at rl:{t}:b: the records beside them, rl:{t}:a:ratelimit:rate and
	// rl:{t}:b:ratelimit:rate, are not granted.
	user, commands := aclUser(t, s, "rl", append([]string{"~rl:{t}:a:ratelimit", "~rl:{t}:b"}, allowCommands...)...)
	l, err := ratelimit.New(user, ratelimit.Config{})
	require.NoError(t, err)
	rules := []ratelimit.Rule{
		{Key: "rl:{t}:a", Limit: ratelimit.Limit{Rate: 10, Period: time.Hour}},
		{Key: "rl:{t}:b", Limit: ratelimit.Limit{Rate: 10, Period: time.Hour, Algorithm: ratelimit.FixedWindow}},
	}
	warm, err := ratelimit.New(admin, ratelimit.Config{}) // caches allow_all.lua
	require.NoError(t, err)
	_, err = warm.AllowAll(ctx, []ratelimit.Rule{{Key: "warm", Limit: rules[0].Limit}})
	require.NoError(t, err)
	for i, want := range []int64{3, 1, 1} { // two SETs, refused, and the script; then the script alone
		before := commands.n.Load()
		all, err := l.AllowAll(ctx, rules)
		require.NoError(t, err, "call %d", i)
		require.True(t, all.Allowed(), "call %d", i)
		assert.EqualValues(t, 10-(i+1), all[0].Remaining, "call %d", i)
		assert.EqualValues(t, 10-(i+1), all[1].Remaining, "call %d", i)
		assert.Equal(t, want, commands.n.Load()-before, "call %d's commands", i)
	}
	for _, rule := range rules {
		assert.Zero(t, admin.Exists(ctx, ratelimit.RecordKey(rule.Key)).Val(), "%s: no record written", rule.Key)
	}
}

// Only a refusal that ran nothing is sent again. An ACL that grants the
// record's key but not SET lets the script run, and fails it inside, at
// the record's SET: that call fails, once, and is not sent again.
func TestRecordErrorInsideScriptNotSentAgain(t *testing.T) {
	s := redistest.StartServer(t)
	ctx := context.Background()
	user, commands := aclUser(t, s, "rl", "~rl:*", "~{rl:*", "+evalsha", "+eval", "+incrby", "+pexpire", "+pttl", "+get")
	l, err := ratelimit.New(user, ratelimit.Config{DisableCoalescing: true})
	require.NoError(t, err)
	limit := ratelimit.Limit{Rate: 10, Period: time.Hour, Algorithm: ratelimit.FixedWindow}
	before := commands.n.Load()
	_, err = l.Allow(ctx, "rl:inside", limit)
	require.Error(t, err)
	assert.EqualValues(t, 1, commands.n.Load()-before, "one script call: %v", err)
}
