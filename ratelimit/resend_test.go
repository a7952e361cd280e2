package ratelimit_test

import (
	"bytes"
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// Limits of 3 per hour, one per algorithm, so that nothing refills while a
// test runs on a real server.
var slowLimits = []ratelimit.Limit{
	{Rate: 3, Period: time.Hour},
	{Rate: 3, Period: time.Hour, Algorithm: ratelimit.FixedWindow},
}

// remaining is what a plain client, whose replies are never lost, sees
// left on key now, without counting.
func remaining(t *testing.T, limiter *ratelimit.Limiter, key string, limit ratelimit.Limit) int64 {
	t.Helper()
	res, err := limiter.AllowN(context.Background(), key, limit, 0)
	require.NoError(t, err)
	return res.Remaining
}

// A re-sent Allow counts its events again, as its documentation says: a
// lost reply that go-redis sends again takes two events of the allowance
// and answers as the second run did. So it can refuse an event its first
// run counted (early), but it never admits beyond the limit, and it never
// answers allowed for an event that was not counted.
func TestResentAllowCountsAgainButNeverBeyondTheLimit(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client, cutter := b.CutClient(t)
		limiter, plain := newLimiter(t, client), newLimiter(t, b.Client)
		for _, limit := range slowLimits {
			key := b.Key(t, "rl-test:")
			require.Equal(t, int64(3), remaining(t, plain, key, limit), "%v: the script is loaded", limit)

			cuts := cutter.Cuts()
			cutter.Arm(1, "evalsha", key)
			res, err := limiter.Allow(ctx, key, limit)
			require.NoError(t, err, "%v", limit)
			require.Equal(t, cuts+1, cutter.Cuts(), "%v", limit)
			assert.True(t, res.Allowed, "%v: the re-send had room and counted", limit)
			assert.Equal(t, int64(1), res.Remaining, "%v: the re-send's answer", limit)
			assert.Equal(t, int64(1), remaining(t, plain, key, limit), "%v: one call counted twice", limit)

			cutter.Arm(1, "evalsha", key)
			res, err = limiter.Allow(ctx, key, limit)
			require.NoError(t, err, "%v", limit)
			require.Equal(t, cuts+2, cutter.Cuts(), "%v", limit)
			assert.False(t, res.Allowed, "%v: the re-send found no room: refused early", limit)
			assert.Zero(t, res.Remaining, "%v", limit)
			assert.Positive(t, res.RetryAfter, "%v", limit)
			assert.Zero(t, remaining(t, plain, key, limit), "%v: the first run counted", limit)

			res, err = plain.Allow(ctx, key, limit)
			require.NoError(t, err)
			assert.False(t, res.Allowed, "%v: 3 counted, nothing beyond", limit)
		}
	})
}

// Under a reply lost on every call, for every algorithm and for AllowAll,
// the calls answered allowed never outnumber the events counted, and the
// events counted never exceed the limit.
func TestResentCallsNeverAdmitBeyondTheLimit(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client, cutter := b.CutClient(t)
		limiter, plain := newLimiter(t, client), newLimiter(t, b.Client)
		tag := "{" + b.Key(t, "rl-test:") + "}"
		gcraKey, windowKey := tag+":gcra", tag+":window"
		t.Cleanup(func() { b.Client.Del(ctx, gcraKey, windowKey) })
		rules := []ratelimit.Rule{{Key: gcraKey, Limit: slowLimits[0]}, {Key: windowKey, Limit: slowLimits[1]}}
		require.Equal(t, int64(3), remaining(t, plain, gcraKey, slowLimits[0]))
		require.Equal(t, int64(3), remaining(t, plain, windowKey, slowLimits[1]))
		_, err := plain.AllowAll(ctx, []ratelimit.Rule{{Key: gcraKey, Limit: slowLimits[0], N: 0}})
		require.NoError(t, err, "the script is loaded")
		require.NoError(t, b.Client.Del(ctx, gcraKey).Err())

		admitted := 0
		for i := range 6 {
			cutter.Arm(1, "evalsha", gcraKey)
			rs, err := limiter.AllowAll(ctx, rules)
			require.NoError(t, err, "call %d", i)
			if rs.Allowed() {
				admitted++
			}
			for j, rule := range rules {
				counted := 3 - remaining(t, plain, rule.Key, rule.Limit)
				assert.LessOrEqual(t, int64(admitted), counted, "call %d, rule %d: every admitted event was counted", i, j)
				assert.LessOrEqual(t, counted, int64(3), "call %d, rule %d: never beyond the limit", i, j)
			}
		}
		assert.Equal(t, 6, cutter.Cuts())
		assert.Equal(t, 1, admitted, "the first call's re-send took the second and third events; the second call's first run none")

		for _, limit := range slowLimits {
			key := b.Key(t, "rl-test:")
			require.Equal(t, int64(3), remaining(t, plain, key, limit))
			admitted := 0
			for i := range 6 {
				cutter.Arm(1, "evalsha", key)
				res, err := limiter.Allow(ctx, key, limit)
				require.NoError(t, err, "%v: call %d", limit, i)
				if res.Allowed {
					admitted++
				}
				counted := 3 - remaining(t, plain, key, limit)
				assert.LessOrEqual(t, int64(admitted), counted, "%v: call %d", limit, i)
				assert.LessOrEqual(t, counted, int64(3), "%v: call %d", limit, i)
			}
		}

		// A reply lost on every try leaves the outcome unknown: the call
		// may have run up to go-redis's 4 times, each within the limit.
		key := b.Key(t, "rl-test:")
		limit := ratelimit.Limit{Rate: 10, Period: time.Hour}
		require.Equal(t, int64(10), remaining(t, plain, key, limit))
		cutter.Arm(10, "evalsha", key)
		_, err = limiter.Allow(ctx, key, limit)
		require.Error(t, err)
		cutter.Arm(0)
		counted := 10 - remaining(t, plain, key, limit)
		assert.True(t, counted >= 1 && counted <= 4, "counted %d times", counted)
	})
}

// A re-sent Reset deletes the key again: the key is back to its full
// allowance, as after one call, and the caller sees no error.
func TestResentReset(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client, cutter := b.CutClient(t)
		limiter, plain := newLimiter(t, client), newLimiter(t, b.Client)
		for _, limit := range slowLimits {
			key := b.Key(t, "rl-test:")
			res, err := plain.AllowN(ctx, key, limit, 3)
			require.NoError(t, err)
			require.True(t, res.Allowed)

			require.NoError(t, plain.Reset(ctx, b.Key(t, "rl-test:"), limit), "%v: the script is loaded", limit)
			cutter.Arm(1, resetCommand(limit), key)
			require.NoError(t, limiter.Reset(ctx, key, limit), "%v", limit)
			assert.False(t, cutter.Armed(), "%v: the reply was cut", limit)
			assert.Zero(t, b.Client.Exists(ctx, dataKey(key, limit)).Val(), "%v", limit)
			assert.Equal(t, int64(3), remaining(t, plain, key, limit), "%v: full again", limit)
		}
	})
}

// A Reset whose reply is lost, with an event counted on the key before
// the client sends it again, leaves the key at its full allowance as of
// the re-send: the event is deleted with the rest, as the documentation
// says, as if Reset had been called a moment later.
func TestResentResetTakesEffectAtTheResend(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		plain := newLimiter(t, b.Client)
		for _, limit := range slowLimits {
			key := b.Key(t, "rl-test:")
			var sends atomic.Int32
			var between error
			client, cutter := b.CutClient(t, beforeWrite(func(p []byte) {
				if bytes.Contains(p, []byte(resetCommand(limit))) && bytes.Contains(p, []byte(key)) && sends.Add(1) == 2 {
					_, between = plain.Allow(ctx, key, limit)
				}
			}))
			res, err := plain.AllowN(ctx, key, limit, 3)
			require.NoError(t, err)
			require.True(t, res.Allowed)

			require.NoError(t, plain.Reset(ctx, b.Key(t, "rl-test:"), limit), "%v: the script is loaded", limit)
			cutter.Arm(1, resetCommand(limit), key)
			require.NoError(t, newLimiter(t, client).Reset(ctx, key, limit), "%v", limit)
			require.NoError(t, between)
			assert.Equal(t, int32(2), sends.Load(), "%v: sent twice", limit)
			assert.Equal(t, int64(3), remaining(t, plain, key, limit), "%v: full as of the re-send", limit)
		}
	})
}

// resetCommand is the command Reset sends for limit: a script for a
// FixedWindow, which checks that the key holds a count, and DEL of its own
// key for GCRA.
func resetCommand(limit ratelimit.Limit) string {
	if limit.Algorithm == ratelimit.FixedWindow {
		return "evalsha"
	}
	return "del"
}

// beforeWrite is a client option that calls f with each command's bytes
// before they are sent.
func beforeWrite(f func(p []byte)) func(*redis.UniversalOptions) {
	return func(o *redis.UniversalOptions) {
		dial := o.Dialer
		o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &hookedConn{Conn: conn, before: f}, nil
		}
	}
}

type hookedConn struct {
	net.Conn
	before func(p []byte)
}

func (c *hookedConn) Write(p []byte) (int, error) {
	c.before(p)
	return c.Conn.Write(p)
}
