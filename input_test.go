package slotlimit_test

import (
	"context"
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
// as well as their own names, and keep their text; they are known
// outcomes, not ErrOutcomeUnknown.
func TestInputErrorsMatchErrInvalidArgument(t *testing.T) {
	b := newRealRedis(t)
	ctx := context.Background()
	key := testKey(t, b)
	l := newLimiter(t, b, key, 2, time.Minute)

	_, err := l.TryAcquire(ctx, "")
	assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder)
	assert.ErrorIs(t, err, slotlimit.ErrInvalidArgument)
	assert.NotErrorIs(t, err, slotlimit.ErrOutcomeUnknown)
	_, err = l.TryAcquireN(ctx, "h", 3)
	assert.NotErrorIs(t, err, slotlimit.ErrOutcomeUnknown)
	assert.ErrorIs(t, err, slotlimit.ErrInvalidWeight)
	assert.ErrorIs(t, err, slotlimit.ErrInvalidArgument)
	assert.NotErrorIs(t, err, slotlimit.ErrInvalidHolder)
	assert.NotErrorIs(t, slotlimit.ErrInvalidArgument, slotlimit.ErrInvalidHolder)
	assert.Equal(t, "slotlimit: invalid holder", slotlimit.ErrInvalidHolder.Error())
	assert.Equal(t, "slotlimit: invalid weight", slotlimit.ErrInvalidWeight.Error())
	assert.Empty(t, storedKeys(t, b, key, 2), "nothing is sent")
}

// Limits, a function the conformance suite does not call, refuses a
// nil context with ErrInvalidArgument, and sends nothing.
func TestLimitsNilContextIsInvalidArgument(t *testing.T) {
	b := newRealRedis(t)
	key := testKey(t, b)
	var nilCtx context.Context
	_, err := slotlimit.Limits(nilCtx, b.Client, key)
	assert.ErrorIs(t, err, slotlimit.ErrInvalidArgument)
	assert.NotErrorIs(t, err, slotlimit.ErrOutcomeUnknown)
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
