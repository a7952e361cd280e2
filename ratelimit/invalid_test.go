package ratelimit_test

import (
	"context"
	"errors"
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
			limiter := ratelimit.New(client)
			for _, limit := range invalidLimits {
				_, err := limiter.Allow(ctx, key, limit)
				assert.ErrorIs(t, err, ratelimit.ErrInvalidLimit, "%+v", limit)
			}
			_, err := limiter.AllowN(ctx, key, ratelimit.PerSecond(1), -1)
			assert.ErrorIs(t, err, ratelimit.ErrInvalidN)
			_, err = limiter.Allow(ctx, "", ratelimit.PerSecond(1))
			assert.ErrorIs(t, err, ratelimit.ErrInvalidKey)
			assert.ErrorIs(t, limiter.Reset(ctx, ""), ratelimit.ErrInvalidKey)
		}
		assert.Zero(t, b.Client.Exists(ctx, key).Val())
	})
}

func TestLimitsAtTheEdgesAreValid(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	limiter := ratelimit.New(b.Client)
	for _, limit := range []ratelimit.Limit{
		{Rate: 1000, Period: time.Millisecond},       // 1µs an event
		{Rate: 1, Period: time.Millisecond},          // the shortest period
		{Rate: 1, Period: 24 * time.Hour, Burst: 10}, // a burst that refills in 10 days
		{Rate: ratelimit.MaxRate, Period: time.Millisecond, Algorithm: ratelimit.FixedWindow},
		{Rate: 10, Period: time.Second, Burst: 10, Algorithm: ratelimit.FixedWindow},
	} {
		res, err := limiter.Allow(ctx, b.Key(t, "rl-test:"), limit)
		require.NoError(t, err, "%v", limit)
		assert.True(t, res.Allowed, "%v", limit)
	}
}

// A nil, zero or nil-client Limiter returns ErrNoClient; a Redis that is
// down returns the client's error; a cancelled ctx, an error matching it.
// Nothing panics.
func TestNoClientRedisDownAndContext(t *testing.T) {
	ctx := context.Background()
	var nilClient *redis.Client
	for _, limiter := range []*ratelimit.Limiter{nil, {}, ratelimit.New(nil), ratelimit.New(nilClient)} {
		_, err := limiter.Allow(ctx, "k", ratelimit.PerSecond(1))
		assert.ErrorIs(t, err, ratelimit.ErrNoClient)
		_, err = limiter.AllowAll(ctx, []ratelimit.Rule{{Key: "k", Limit: ratelimit.PerSecond(1)}})
		assert.ErrorIs(t, err, ratelimit.ErrNoClient)
		assert.ErrorIs(t, limiter.Reset(ctx, "k"), ratelimit.ErrNoClient)
	}

	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer down.Close()
	limiter := ratelimit.New(down)
	_, err := limiter.Allow(ctx, "k", ratelimit.PerSecond(1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `ratelimit: allow "k"`)
	_, err = limiter.AllowAll(ctx, []ratelimit.Rule{{Key: "k", Limit: ratelimit.PerSecond(1)}})
	assert.Error(t, err)
	assert.Error(t, limiter.Reset(ctx, "k"))

	b := redistest.Miniredis(t)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = ratelimit.New(b.Client).Allow(cancelled, "k", ratelimit.PerSecond(1))
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.Zero(t, b.Client.Exists(ctx, "k").Val())
}

// Reset gives the key back its full allowance.
func TestReset(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := ratelimit.New(b.Client)
		for _, limit := range bothAlgorithms {
			key := b.Key(t, "rl-test:")
			res, err := limiter.AllowN(ctx, key, limit, 5)
			require.NoError(t, err)
			require.True(t, res.Allowed)
			res, err = limiter.Allow(ctx, key, limit)
			require.NoError(t, err)
			require.False(t, res.Allowed, "%v", limit)
			require.NoError(t, limiter.Reset(ctx, key))
			require.NoError(t, limiter.Reset(ctx, key), "idempotent")
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
