package ratelimit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// A nil ctx is refused with ErrInvalidArgument by every method, naming
// the package once, the method by its own name and the key, with nothing
// sent, no panic, and no event: the Observer is never handed a nil ctx.
func TestNilContextIsAnInvalidArgument(t *testing.T) {
	b := redistest.Redis(t)
	rec := &observetest.Recorder{}
	limiter, err := ratelimit.New(b.Client, ratelimit.Config{Observer: rec})
	require.NoError(t, err)
	key := b.Key(t, "rl-test:")
	var nilCtx context.Context
	_, allow := limiter.Allow(nilCtx, key, ratelimit.PerSecond(1))
	_, allowN := limiter.AllowN(nilCtx, key, ratelimit.Limit{Rate: 1, Period: time.Second, Algorithm: ratelimit.FixedWindow}, 1)
	_, allowAll := limiter.AllowAll(nilCtx, []ratelimit.Rule{{Key: key, Limit: ratelimit.PerSecond(1)}})
	reset := limiter.Reset(nilCtx, key, ratelimit.PerSecond(1))
	for _, tt := range []struct {
		err  error
		want string
	}{
		{allow, `ratelimit: allow "` + key + `": invalid argument: `},
		{allowN, `ratelimit: allow n "` + key + `": invalid argument: `},
		{allowAll, `ratelimit: allow all "` + key + `": invalid argument: `},
		{reset, `ratelimit: reset "` + key + `": invalid argument: `},
	} {
		require.ErrorIs(t, tt.err, ratelimit.ErrInvalidArgument, tt.want)
		assert.True(t, strings.HasPrefix(tt.err.Error(), tt.want), "%q, want %q", tt.err, tt.want)
		assert.Equal(t, 1, strings.Count(tt.err.Error(), "ratelimit"), "%q", tt.err)
	}
	assert.Zero(t, b.Client.Exists(context.Background(), key).Val(), "nothing was written")
	assert.Empty(t, rec.Take(), "no event")
}

// Every error of AllowN names the method AllowN, not Allow: bad input,
// a Limiter not made by New, and a call sent to a server that is down.
func TestAllowNErrorsNameAllowN(t *testing.T) {
	ctx := context.Background()
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer down.Close()
	limiter := newLimiter(t, down)
	_, badN := limiter.AllowN(ctx, "k", ratelimit.PerSecond(1), -1)
	_, badLimit := limiter.AllowN(ctx, "k", ratelimit.Limit{}, 1)
	_, sent := limiter.AllowN(ctx, "k", ratelimit.PerSecond(1), 1)
	_, zero := (&ratelimit.Limiter{}).AllowN(ctx, "k", ratelimit.PerSecond(1), 1)
	for _, err := range []error{badN, badLimit, sent} {
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), `ratelimit: allow n "k": `), "%q", err)
	}
	require.ErrorIs(t, zero, ratelimit.ErrInvalidConfig)
	assert.True(t, strings.HasPrefix(zero.Error(), `ratelimit: allow n: invalid config`), "%q", zero)
}

// A fixed window of Rate MaxRate counts exactly at its edge: with 2^53-1
// counted, 2 more would make 2^53+1, which a Lua double rounds to 2^53;
// the call is refused and the count stays within the Rate. One more is
// allowed and makes the count the Rate exactly.
func TestFixedWindowCountsExactlyAtMaxRate(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		limit := ratelimit.Limit{Rate: ratelimit.MaxRate, Period: time.Hour, Algorithm: ratelimit.FixedWindow}
		allowN := func(key string, n int64) ratelimit.Result {
			res, err := limiter.AllowN(ctx, key, limit, n)
			require.NoError(t, err)
			return res
		}
		allowAll := func(key string, n int64) ratelimit.Result {
			res, err := limiter.AllowAll(ctx, []ratelimit.Rule{{Key: key, Limit: limit, N: n}})
			require.NoError(t, err)
			return res[0]
		}
		for name, allow := range map[string]func(string, int64) ratelimit.Result{"AllowN": allowN, "AllowAll": allowAll} {
			key := b.Key(t, "rl-test:")
			require.True(t, allow(key, ratelimit.MaxRate-1).Allowed, name)
			res := allow(key, 2)
			assert.False(t, res.Allowed, "%s: 2^53+1 is beyond the Rate", name)
			assert.Equal(t, int64(1), res.Remaining, name)
			assert.Equal(t, "9007199254740991", b.Client.Get(ctx, key).Val(), "%s: the refusal counted nothing", name)
			res = allow(key, 1)
			assert.True(t, res.Allowed, name)
			assert.Zero(t, res.Remaining, name)
			assert.Equal(t, "9007199254740992", b.Client.Get(ctx, key).Val(), name)
		}
	})
}

// FixedWindow's Allow counts first and takes a refused n back, so the
// counts it meets at the edges are left as they were: a count that n
// would carry past 64 bits is refused with nothing written, a refusal of
// n above what is left keeps what is left, and a count of 0 that another
// client left with an expiry keeps its window (only a count with no
// expiry is given one).
func TestFixedWindowEdgesOfCountingFirst(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		limit := ratelimit.Limit{Rate: 10, Period: time.Hour, Algorithm: ratelimit.FixedWindow}

		full := b.Key(t, "rl-test:")
		require.NoError(t, b.Client.Set(ctx, full, "9223372036854775807", time.Minute).Err())
		res, err := limiter.Allow(ctx, full, limit)
		require.NoError(t, err)
		assert.False(t, res.Allowed, "a count at 2^63-1 is far beyond the Rate")
		assert.Equal(t, "9223372036854775807", b.Client.Get(ctx, full).Val(), "the refusal counted nothing")

		some := b.Key(t, "rl-test:")
		require.NoError(t, b.Client.Set(ctx, some, "8", time.Minute).Err())
		res, err = limiter.AllowN(ctx, some, limit, 3)
		require.NoError(t, err)
		assert.False(t, res.Allowed, "8 + 3 is beyond 10")
		assert.Equal(t, int64(2), res.Remaining, "what was left is still left")
		assert.Equal(t, "8", b.Client.Get(ctx, some).Val(), "the refusal counted nothing")
		assert.InDelta(t, time.Minute, res.ResetAfter, float64(2*time.Second), "the window is the one found")
		res, err = limiter.AllowN(ctx, some, limit, 2)
		require.NoError(t, err)
		assert.True(t, res.Allowed, "8 + 2 fits")
		assert.Zero(t, res.Remaining)

		zero := b.Key(t, "rl-test:")
		require.NoError(t, b.Client.Set(ctx, zero, "0", time.Minute).Err())
		res, err = limiter.Allow(ctx, zero, limit)
		require.NoError(t, err)
		assert.True(t, res.Allowed)
		assert.Equal(t, int64(9), res.Remaining)
		assert.InDelta(t, time.Minute, res.ResetAfter, float64(2*time.Second), "the count of 0 kept its window")
		assert.InDelta(t, time.Minute, b.Client.PTTL(ctx, zero).Val(), float64(2*time.Second))

		bare := b.Key(t, "rl-test:")
		require.NoError(t, b.Client.Set(ctx, bare, "0", 0).Err())
		res, err = limiter.Allow(ctx, bare, limit)
		require.NoError(t, err)
		assert.True(t, res.Allowed)
		assert.Equal(t, time.Hour, res.ResetAfter, "a count with no expiry is given the window")
		assert.InDelta(t, time.Hour, b.Client.PTTL(ctx, bare).Val(), float64(2*time.Second))
	})
}
