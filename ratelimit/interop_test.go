package ratelimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// classicFilter is the classic fixed-window filter.lua, verbatim: INCR, refuse above
// ARGV[1], EXPIRE ARGV[2] seconds on the first hit.
const classicFilter = `-- filter.lua
local c
-- see Redis Whether the counter in exceeds the limit , The counter for KEYS[1] , The threshold for ARGV[1]
c = redis.call('incr', KEYS[1])
-- Transfinite
if c and tonumber(c) > tonumber(ARGV[1]) then
return c;
end
-- If current limiting is called for the first time , Set the expiration time of the counter , The expiration date is from ARGV[2] Appoint
if tonumber(c) == 1 then
redis.call('expire', KEYS[1], ARGV[2])
end
return c;
`

// The classic script and FixedWindow share one key, and the window's limit
// holds between them; a count the classic pattern left without an expiry
// is given one.
func TestClassicFixedWindowScriptSharesTheKey(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		classic := redis.NewScript(classicFilter)
		key := b.Key(t, "rl-test:")
		limit := ratelimit.Limit{Rate: 5, Period: time.Second, Algorithm: ratelimit.FixedWindow}
		classicCall := func() int64 {
			t.Helper()
			c, err := classic.Run(ctx, b.Client, []string{key}, 5, 1).Int64()
			require.NoError(t, err)
			return c
		}
		allow := func(n int64) ratelimit.Result {
			t.Helper()
			res, err := limiter.AllowN(ctx, key, limit, n)
			require.NoError(t, err)
			return res
		}

		assert.Equal(t, int64(1), classicCall(), "the classic script starts the window")
		assert.Equal(t, int64(2), classicCall())
		res := allow(3)
		assert.True(t, res.Allowed)
		assert.Zero(t, res.Remaining)
		assert.False(t, allow(1).Allowed, "5 of 5 taken between them")
		assert.Equal(t, "5", b.Client.Get(ctx, key).Val(), "our refusal counted nothing")
		assert.Equal(t, int64(6), classicCall(), "the classic script refuses, and counts its refusal")
		res = allow(1)
		assert.False(t, res.Allowed)
		assert.True(t, res.RetryAfter > 0 && res.RetryAfter <= time.Second, "until the classic script's window ends: %v", res.RetryAfter)

		b.Advance(1100 * time.Millisecond)
		assert.True(t, allow(1).Allowed, "a new window, started by us")
		assert.Equal(t, int64(2), classicCall(), "the classic script counts in our window")
		pttl := b.Client.PTTL(ctx, key).Val()
		assert.True(t, pttl > 0 && pttl <= time.Second, "our window's expiry stands: %v", pttl)

		// A copy of the pattern that sent INCR and EXPIRE apart, and died
		// between them (redis/redis#4423), left a count with no expiry.
		require.NoError(t, b.Client.Del(ctx, key).Err())
		for range 7 {
			require.NoError(t, b.Client.Incr(ctx, key).Err())
		}
		require.Equal(t, time.Duration(-1), b.Client.PTTL(ctx, key).Val())
		res = allow(1)
		assert.False(t, res.Allowed)
		assert.Equal(t, time.Second, res.RetryAfter, "the repaired window")
		pttl = b.Client.PTTL(ctx, key).Val()
		assert.True(t, pttl > 0 && pttl <= time.Second, "repaired: %v", pttl)
		b.Advance(1100 * time.Millisecond)
		assert.True(t, allow(1).Allowed, "the user is blocked no longer")
	})
}

// Under load, the classic script and FixedWindow on one key together never
// allow more than the rate in a window.
func TestClassicFixedWindowScriptSharesTheKeyUnderLoad(t *testing.T) {
	for _, b := range realBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			limiter := newLimiter(t, b.Client)
			classic := redis.NewScript(classicFilter)
			key := b.Key(t, "rl-test:")
			const rate, window = 20, time.Second // the classic EXPIRE is in whole seconds
			limit := ratelimit.Limit{Rate: rate, Period: window, Algorithm: ratelimit.FixedWindow}
			require.NoError(t, classic.Load(ctx, b.Client).Err())
			var allowed, calls, failures atomic.Int64
			start := b.Now()
			deadline := time.Now().Add(1500 * time.Millisecond)
			var wg sync.WaitGroup
			for g := range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 20000 && time.Now().Before(deadline); i++ {
						calls.Add(1)
						if g%2 == 0 {
							c, err := classic.EvalSha(ctx, b.Client, []string{key}, rate, 1).Int64()
							if err != nil {
								failures.Add(1)
							} else if c <= rate {
								allowed.Add(1)
							}
							continue
						}
						res, err := limiter.Allow(ctx, key, limit)
						if err != nil {
							failures.Add(1)
						} else if res.Allowed {
							allowed.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			span := b.Now().Sub(start)
			windows := int64(span/window) + 1
			assert.Zero(t, failures.Load())
			assert.LessOrEqual(t, allowed.Load(), rate*windows, "%d calls over %v", calls.Load(), span)
			assert.Greater(t, allowed.Load(), int64(rate), "more than one window was used")
		})
	}
}

// realBackends returns a real Redis and a real Cluster.
func realBackends(t *testing.T) []*redistest.Backend {
	return []*redistest.Backend{redistest.Redis(t), redistest.RedisCluster(t)}
}
