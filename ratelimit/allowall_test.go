package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// A user's GCRA limit and its tenant's fixed window, checked together:
// a call either limit refuses counts on neither.
func TestAllowAllIsAllOrNothing(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		tenant := "{" + b.Key(t, "rl-test:") + "}"
		userA, userB, userC := tenant+":user:a", tenant+":user:b", tenant+":user:c"
		t.Cleanup(func() { b.Client.Del(ctx, tenant, userA, userB, userC) })
		perTenant := ratelimit.Limit{Rate: 3, Period: time.Minute, Algorithm: ratelimit.FixedWindow}
		perUser := ratelimit.PerMinute(2)
		call := func(user string) ratelimit.Results {
			t.Helper()
			rs, err := limiter.AllowAll(ctx, []ratelimit.Rule{{Key: tenant, Limit: perTenant}, {Key: user, Limit: perUser}})
			require.NoError(t, err)
			require.Len(t, rs, 2)
			return rs
		}

		for i := range 2 {
			rs := call(userA)
			assert.True(t, rs.Allowed(), "call %d", i)
			assert.Zero(t, rs.RetryAfter())
		}
		rs := call(userA) // the user's burst is spent; the tenant has room
		assert.False(t, rs.Allowed())
		assert.True(t, rs[0].Allowed, "the tenant alone had room")
		assert.Equal(t, int64(1), rs[0].Remaining, "and counted nothing")
		assert.False(t, rs[1].Allowed)
		assert.InDelta(t, float64(30*time.Second), float64(rs.RetryAfter()), float64(time.Second))
		assert.Equal(t, "2", b.Client.Get(ctx, tenant).Val(), "the refusal did not count on the tenant")

		assert.True(t, call(userB).Allowed())
		rs = call(userC) // the tenant is full
		assert.False(t, rs.Allowed())
		assert.False(t, rs[0].Allowed)
		assert.True(t, rs[1].Allowed, "the user alone had room")
		assert.Equal(t, int64(2), rs[1].Remaining)
		assert.Zero(t, b.Client.Exists(ctx, userC).Val(), "the refusal did not count on the user")
		assert.Equal(t, perTenant, rs[0].Limit)
	})
}

// Keys in more than one hash slot are refused on every client, with
// nothing sent; a key twice, no rules or a bad rule too.
func TestAllowAllRefusesBadRules(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		a, c := b.Key(t, "rl-test:a:"), b.Key(t, "rl-test:c:")
		limit := ratelimit.PerSecond(5)
		for _, tt := range []struct {
			rules []ratelimit.Rule
			want  error
		}{
			{[]ratelimit.Rule{{Key: a, Limit: limit}, {Key: c, Limit: limit}}, ratelimit.ErrCrossSlot},
			{[]ratelimit.Rule{{Key: "{" + a + "}", Limit: limit}, {Key: "{" + a + "}", Limit: limit}}, ratelimit.ErrInvalidKey},
			{[]ratelimit.Rule{{Key: a, Limit: limit}, {Key: "", Limit: limit}}, ratelimit.ErrInvalidKey},
			{[]ratelimit.Rule{{Key: a, Limit: limit}, {Key: "{" + a + "}", Limit: ratelimit.Limit{}}}, ratelimit.ErrInvalidLimit},
			{[]ratelimit.Rule{{Key: a, Limit: limit, N: -1}}, ratelimit.ErrInvalidN},
			{nil, ratelimit.ErrInvalidLimit},
		} {
			rs, err := limiter.AllowAll(ctx, tt.rules)
			assert.ErrorIs(t, err, tt.want, "%+v", tt.rules)
			assert.Nil(t, rs)
		}
		assert.Zero(t, b.Client.Exists(ctx, a, c).Val(), "nothing was written")
	})
}

// A key of another type fails the whole call, and no key is written: a
// count without an expiry met first keeps having none.
func TestAllowAllWrongTypeWritesNothing(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		tag := "{" + b.Key(t, "rl-test:") + "}"
		// A GCRA limit on tag+":user" keeps its time at tag+":user:ratelimit",
		// which holds a list here.
		count, user, list := tag+":count", tag+":user", tag+":user:ratelimit"
		t.Cleanup(func() { b.Client.Del(ctx, count, list) })
		require.NoError(t, b.Client.Set(ctx, count, "2", 0).Err())
		require.NoError(t, b.Client.RPush(ctx, list, "x").Err())
		window := ratelimit.Limit{Rate: 5, Period: time.Second, Algorithm: ratelimit.FixedWindow}
		_, err := limiter.AllowAll(ctx, []ratelimit.Rule{{Key: count, Limit: window}, {Key: user, Limit: ratelimit.PerSecond(5)}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "WRONGTYPE")
		assert.Equal(t, "2", b.Client.Get(ctx, count).Val())
		assert.Equal(t, time.Duration(-1), b.Client.PTTL(ctx, count).Val(), "not repaired: nothing is written")
		assert.Equal(t, []string{"x"}, b.Client.LRange(ctx, list, 0, -1).Val())
		assert.False(t, errors.Is(err, ratelimit.ErrInvalidLimit))
	})
}
