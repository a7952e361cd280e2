package slotlimit_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// Do with a nil function returns ErrInvalidArgument, takes nothing and
// does not panic.
func TestDoWithNilFunctionIsInvalidArgument(t *testing.T) {
	b := newRealRedis(t)
	ctx := context.Background()
	key := testKey(t, b)
	l := newLimiter(t, b, key, 2, time.Minute)
	assert.NotPanics(t, func() {
		err := l.Do(ctx, 1, nil)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidArgument)
		assert.ErrorContains(t, err, "Do")
	})
	assert.Empty(t, storedKeys(t, b, key, 2), "nothing is sent")
}

// The errors of bad input, holder and weight, match ErrInvalidArgument
// as well as their own names, and keep their text.
func TestInputErrorsMatchErrInvalidArgument(t *testing.T) {
	b := newRealRedis(t)
	ctx := context.Background()
	key := testKey(t, b)
	l := newLimiter(t, b, key, 2, time.Minute)

	_, err := l.TryAcquire(ctx, "")
	assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder)
	assert.ErrorIs(t, err, slotlimit.ErrInvalidArgument)
	_, err = l.TryAcquireN(ctx, "h", 3)
	assert.ErrorIs(t, err, slotlimit.ErrInvalidWeight)
	assert.ErrorIs(t, err, slotlimit.ErrInvalidArgument)
	assert.NotErrorIs(t, err, slotlimit.ErrInvalidHolder)
	assert.NotErrorIs(t, slotlimit.ErrInvalidArgument, slotlimit.ErrInvalidHolder)
	assert.Equal(t, "slotlimit: invalid holder", slotlimit.ErrInvalidHolder.Error())
	assert.Equal(t, "slotlimit: invalid weight", slotlimit.ErrInvalidWeight.Error())
	assert.Empty(t, storedKeys(t, b, key, 2), "nothing is sent")
}

// A nil context is an invalid argument to every method, which sends
// nothing and does not panic.
func TestNilContextIsInvalidArgument(t *testing.T) {
	b := newRealRedis(t)
	key := testKey(t, b)
	l := newLimiter(t, b, key, 2, time.Minute)
	c, err := slotlimit.NewCounter(b.Client, slotlimit.Config{Key: key + ":counter", Limit: 2})
	require.NoError(t, err)
	var ctx context.Context // nil
	calls := map[string]func() error{
		"TryAcquire":      func() error { _, err := l.TryAcquire(ctx, "x"); return err },
		"AcquireN":        func() error { _, err := l.AcquireN(ctx, "x", 1); return err },
		"Release":         func() error { return l.Release(ctx, "x") },
		"Renew":           func() error { return l.Renew(ctx, "x") },
		"Count":           func() error { _, err := l.Count(ctx); return err },
		"Refusals":        func() error { _, err := l.Refusals(ctx); return err },
		"Holders":         func() error { _, err := l.Holders(ctx); return err },
		"Inspect":         func() error { _, err := l.Inspect(ctx); return err },
		"TryAcquireBatch": func() error { _, err := l.TryAcquireBatch(ctx, []string{"x"}); return err },
		"ReleaseBatch":    func() error { _, err := l.ReleaseBatch(ctx, []string{"x"}); return err },
		"AcquireLease":    func() error { _, err := l.AcquireLease(ctx, 1); return err },
		"TryAcquireLease": func() error { _, err := l.TryAcquireLease(ctx, 1); return err },
		"Do":              func() error { return l.Do(ctx, 1, func(context.Context) error { return errors.New("ran") }) },
		"Lease.Release":   func() error { return l.Lease("x").Release(ctx) },
		"Lease.Renew":     func() error { return l.Lease("x").Renew(ctx) },
		"Lease.KeepAlive": func() error { return context.Cause(l.Lease("x").KeepAlive(ctx)) },
		"nil Lease.KeepAlive": func() error {
			var x *slotlimit.Lease
			return context.Cause(x.KeepAlive(ctx))
		},
		"Limits":          func() error { _, err := slotlimit.Limits(ctx, b.Client, key); return err },
		"Counter.Acquire": func() error { _, err := c.Acquire(ctx); return err },
		"Counter.Release": func() error { return c.Release(ctx) },
		"Counter.Count":   func() error { _, err := c.Count(ctx); return err },
	}
	for op, call := range calls {
		assert.NotPanics(t, func() {
			assert.ErrorIs(t, call(), slotlimit.ErrInvalidArgument, op)
		}, op)
	}
	assert.Empty(t, storedKeys(t, b, key, 2), "nothing is sent")
}

// New and NewCounter refuse a TTL above MaxTTL, such as math.MaxInt64
// meant as "for ever", and a Limit above MaxLimit; MaxTTL and MaxLimit
// themselves work, and their deadlines and counts come back exact.
func TestConfigBoundsAreExact(t *testing.T) {
	b := newRealRedis(t)
	ctx := context.Background()
	for _, cfg := range []slotlimit.Config{
		{Key: "k", Limit: 1, TTL: math.MaxInt64},
		{Key: "k", Limit: 1, TTL: slotlimit.MaxTTL + time.Millisecond},
		{Key: "k", Limit: 1 << 53},
		{Key: "k", Limit: math.MaxInt64},
	} {
		_, err := slotlimit.New(b.Client, cfg)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "New(%v)", cfg)
		_, err = slotlimit.NewCounter(b.Client, cfg)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "NewCounter(%v)", cfg)
	}

	key := testKey(t, b)
	l := newLimiter(t, b, key, slotlimit.MaxLimit, slotlimit.MaxTTL)
	before := time.Now()
	res, err := l.TryAcquireN(ctx, "all", slotlimit.MaxLimit)
	require.NoError(t, err)
	require.True(t, res.Acquired)
	assert.Equal(t, int64(slotlimit.MaxLimit), res.Count)
	assert.WithinDuration(t, before.Add(slotlimit.MaxTTL), res.ExpiresAt, 5*time.Second, "a lease of MaxTTL")
	ttl, err := b.Client.PTTL(ctx, key).Result()
	require.NoError(t, err)
	assert.InDelta(t, float64(slotlimit.MaxTTL), float64(ttl), float64(5*time.Second), "the key lapses with the lease")

	// A refusal reports the units in use as -1 - units, exact at MaxLimit.
	results, err := l.TryAcquireBatch(ctx, []string{"a", "b"})
	require.NoError(t, err)
	for _, res := range results {
		assert.False(t, res.Acquired)
		assert.Equal(t, int64(slotlimit.MaxLimit), res.Count, "the units in use, exactly")
	}

	c, err := slotlimit.NewCounter(b.Client, slotlimit.Config{Key: key + ":counter", Limit: slotlimit.MaxLimit, TTL: slotlimit.MaxTTL})
	require.NoError(t, err)
	t.Cleanup(func() { b.Client.Del(context.Background(), key+":counter") })
	res, err = c.TryAcquire(ctx)
	require.NoError(t, err)
	require.True(t, res.Acquired)
	assert.WithinDuration(t, before.Add(slotlimit.MaxTTL), res.ExpiresAt, 5*time.Second, "a Counter's lease of MaxTTL")
}
