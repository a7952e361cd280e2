package ratelimit_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

var invalidLimits = []ratelimit.Limit{
	{},
	{Rate: 0, Period: time.Second},
	{Rate: -1, Period: time.Second},
	{Rate: ratelimit.MaxRate + 1, Period: time.Second, Algorithm: ratelimit.FixedWindow},
	{Rate: 1},
	{Rate: 1, Period: -time.Second},
	{Rate: 1, Period: time.Microsecond},
	{Rate: 1, Period: 1500 * time.Microsecond},
	{Rate: 1, Period: time.Second, Burst: -1},
	{Rate: 1, Period: time.Second, Algorithm: 2},
	{Rate: 1, Period: time.Second, Algorithm: -1},
	{Rate: 10, Period: time.Second, Burst: 5, Algorithm: ratelimit.FixedWindow},
	{Rate: 1001, Period: time.Millisecond},                              // under 1µs an event
	{Rate: 1, Period: time.Hour, Burst: 1 << 40},                        // a burst that refills in 125 million years
	{Rate: 1, Period: time.Second, Burst: ratelimit.MaxRate + 1},        // above MaxRate
	{Rate: 1 << 40, Period: 1 << 40 * time.Millisecond, Burst: 1 << 45}, // 1ms an event, burst 1,100 years
	{Rate: 1, Period: ratelimit.MaxBurstTime.Truncate(time.Millisecond) + time.Millisecond, Algorithm: ratelimit.FixedWindow},
	{Rate: 1, Period: time.Duration(math.MaxInt64).Truncate(time.Millisecond), Algorithm: ratelimit.FixedWindow}, // 292 years: µs beyond 2^53
	{Rate: math.MaxInt64, Period: math.MaxInt64, Burst: math.MaxInt64, Algorithm: math.MaxInt},
	{Rate: math.MinInt64, Period: math.MinInt64, Burst: math.MinInt64, Algorithm: math.MinInt},
	{Rate: ratelimit.MaxRate, Period: time.Duration(math.MaxInt64).Truncate(time.Millisecond), Burst: ratelimit.MaxRate},
}

// Bad limits, keys and n get their error with nothing sent, on every
// backend: the same calls on a client of no server get the same errors.
func TestBadInputSendsNothing(t *testing.T) {
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer down.Close()
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		key := b.Key(t, "rl-test:")
		for _, client := range []redis.UniversalClient{b.Client, down} {
			limiter := newLimiter(t, client)
			for _, limit := range invalidLimits {
				_, err := limiter.Allow(ctx, key, limit)
				assert.ErrorIs(t, err, ratelimit.ErrInvalidLimit, "%+v", limit)
			}
			_, err := limiter.AllowN(ctx, key, ratelimit.PerSecond(1), -1)
			assert.ErrorIs(t, err, ratelimit.ErrInvalidN)
			_, err = limiter.Allow(ctx, "", ratelimit.PerSecond(1))
			assert.ErrorIs(t, err, ratelimit.ErrInvalidKey)
			assert.ErrorIs(t, limiter.Reset(ctx, "", ratelimit.PerSecond(1)), ratelimit.ErrInvalidKey)
			for _, limit := range invalidLimits {
				assert.ErrorIs(t, limiter.Reset(ctx, key, limit), ratelimit.ErrInvalidLimit, "%+v", limit)
			}
		}
		assert.Zero(t, b.Client.Exists(ctx, key).Val())
	})
}

func TestLimitsAtTheEdgesAreValid(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	limiter := newLimiter(t, b.Client)
	for _, limit := range []ratelimit.Limit{
		{Rate: 1000, Period: time.Millisecond},       // 1µs an event
		{Rate: 1, Period: time.Millisecond},          // the shortest period
		{Rate: 1, Period: 24 * time.Hour, Burst: 10}, // a burst that refills in 10 days
		{Rate: ratelimit.MaxRate, Period: time.Millisecond, Algorithm: ratelimit.FixedWindow},
		{Rate: 10, Period: time.Second, Burst: 10, Algorithm: ratelimit.FixedWindow},
		{Rate: 1, Period: ratelimit.MaxBurstTime.Truncate(time.Millisecond), Algorithm: ratelimit.FixedWindow},
	} {
		res, err := limiter.Allow(ctx, b.Key(t, "rl-test:"), limit)
		require.NoError(t, err, "%v", limit)
		assert.True(t, res.Allowed, "%v", limit)
	}
}

// A Redis that is down returns the client's error, named; a cancelled
// ctx, an error matching it, with nothing written. Nothing panics. (The
// conformance suite checks nil clients and nil and zero Limiters.)
func TestRedisDownAndContext(t *testing.T) {
	ctx := context.Background()
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer down.Close()
	limiter := newLimiter(t, down)
	_, err := limiter.Allow(ctx, "k", ratelimit.PerSecond(1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `ratelimit: allow "k"`)
	_, err = limiter.AllowAll(ctx, []ratelimit.Rule{{Key: "k", Limit: ratelimit.PerSecond(1)}})
	assert.Error(t, err)
	assert.Error(t, limiter.Reset(ctx, "k", ratelimit.PerSecond(1)))

	b := redistest.Miniredis(t)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = newLimiter(t, b.Client).Allow(cancelled, "k", ratelimit.PerSecond(1))
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.Zero(t, b.Client.Exists(ctx, "k").Val())
}

// Reset gives the key back its full allowance.
func TestReset(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		for _, limit := range bothAlgorithms {
			key := b.Key(t, "rl-test:")
			res, err := limiter.AllowN(ctx, key, limit, 5)
			require.NoError(t, err)
			require.True(t, res.Allowed)
			res, err = limiter.Allow(ctx, key, limit)
			require.NoError(t, err)
			require.False(t, res.Allowed, "%v", limit)
			require.NoError(t, limiter.Reset(ctx, key, limit))
			require.NoError(t, limiter.Reset(ctx, key, limit), "idempotent")
			res, err = limiter.AllowN(ctx, key, limit, 5)
			require.NoError(t, err)
			assert.True(t, res.Allowed, "%v", limit)
		}
	})
}

func TestLimitString(t *testing.T) {
	for _, tt := range []struct {
		limit ratelimit.Limit
		want  string
	}{
		{ratelimit.PerSecond(10), "10 per 1s (burst 10, gcra)"},
		{ratelimit.PerMinute(100), "100 per 1m0s (burst 100, gcra)"},
		{ratelimit.Limit{Rate: 1, Period: 3 * time.Minute, Burst: 5}, "1 per 3m0s (burst 5, gcra)"},
		{ratelimit.Limit{Rate: 100, Period: time.Minute, Algorithm: ratelimit.FixedWindow}, "100 per 1m0s (fixed window)"},
		{ratelimit.Limit{Rate: 1, Period: time.Second, Algorithm: 7}, "1 per 1s (burst 1, algorithm(7))"},
		{ratelimit.Limit{}, "0 per 0s (burst 0, gcra)"},
	} {
		assert.Equal(t, tt.want, tt.limit.String())
	}
}

// n beyond MaxRate is more than Lua counts exactly (2^53+1 would be
// counted as 2^53): it is refused with ErrInvalidN, nothing written, even
// where the limit's Rate is MaxRate; n of MaxRate is counted exactly.
func TestNBeyondMaxRateIsInvalid(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		key := b.Key(t, "rl-test:")
		huge := ratelimit.Limit{Rate: ratelimit.MaxRate, Period: time.Hour, Algorithm: ratelimit.FixedWindow}
		for _, limit := range []ratelimit.Limit{huge, ratelimit.PerSecond(1)} {
			for _, n := range []int64{ratelimit.MaxRate + 1, math.MaxInt64} {
				_, err := limiter.AllowN(ctx, key, limit, n)
				assert.ErrorIs(t, err, ratelimit.ErrInvalidN, "%v, n %d", limit, n)
				_, err = limiter.AllowAll(ctx, []ratelimit.Rule{{Key: key, Limit: limit, N: n}})
				assert.ErrorIs(t, err, ratelimit.ErrInvalidN, "%v, n %d", limit, n)
			}
		}
		assert.Zero(t, b.Client.Exists(ctx, key).Val(), "nothing was written")

		res, err := limiter.AllowN(ctx, key, huge, ratelimit.MaxRate)
		require.NoError(t, err)
		assert.True(t, res.Allowed)
		assert.Zero(t, res.Remaining)
		assert.Equal(t, "9007199254740992", b.Client.Get(ctx, key).Val())
	})
}

// Every error names the package once and the method that failed, with
// the key: bad input, a key of another kind, and a Redis that is down.
func TestErrorsNameTheMethodOnce(t *testing.T) {
	b := redistest.Redis(t)
	ctx := context.Background()
	limiter := newLimiter(t, b.Client)
	text := b.Key(t, "rl-test:")
	require.NoError(t, b.Client.Set(ctx, text, "abc", 0).Err())
	require.NoError(t, b.Client.Set(ctx, gcraKey(text), "abc", 0).Err())
	t.Cleanup(func() { b.Client.Del(ctx, gcraKey(text)) })
	_, noRules := limiter.AllowAll(ctx, nil)
	_, badLimit := limiter.Allow(ctx, "k", ratelimit.Limit{})
	_, badN := limiter.AllowN(ctx, "k", ratelimit.PerSecond(1), -1)
	_, badRule := limiter.AllowAll(ctx, []ratelimit.Rule{{Key: "k", Limit: ratelimit.PerSecond(1), N: -1}})
	_, gcraText := limiter.Allow(ctx, text, ratelimit.PerSecond(1))
	_, windowText := limiter.Allow(ctx, text, ratelimit.Limit{Rate: 1, Period: time.Second, Algorithm: ratelimit.FixedWindow})
	_, allText := limiter.AllowAll(ctx, []ratelimit.Rule{{Key: text, Limit: ratelimit.PerSecond(1)}})
	for _, tt := range []struct {
		err  error
		want string
	}{
		{noRules, `ratelimit: allow all "": invalid limit: `},
		{badLimit, `ratelimit: allow "k": invalid limit: `},
		{badN, `ratelimit: allow n "k": invalid n: `},
		{badRule, `ratelimit: allow all "k": invalid n: `},
		{limiter.Reset(ctx, "", ratelimit.PerSecond(1)), `ratelimit: reset "": invalid key: `},
		{gcraText, `ratelimit: allow "` + text + `": ERR the key holds a string that is not a GCRA time`},
		{windowText, `ratelimit: allow "` + text + `": ERR the key holds a string that is not a count`},
		{allText, `ratelimit: allow all "` + text + `": ERR the key of rule 1 holds a string that is not a GCRA time`},
	} {
		require.Error(t, tt.err, tt.want)
		assert.True(t, strings.HasPrefix(tt.err.Error(), tt.want), "%q, want %q", tt.err, tt.want)
		assert.Equal(t, 1, strings.Count(tt.err.Error(), "ratelimit"), "%q", tt.err)
	}
}
