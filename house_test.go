package slotlimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// New and NewCounter refuse a nil client, untyped or typed nil, and a
// Config they cannot work with, with an error matching ErrInvalidConfig,
// and send nothing: not even to a client that works.
func TestConstructorsRefuseNilClientsAndSendNothing(t *testing.T) {
	cfg := slotlimit.Config{Key: "k", Limit: 1}
	for name, client := range map[string]redis.UniversalClient{
		"untyped nil":         nil,
		"nil *redis.Client":   (*redis.Client)(nil),
		"nil *ClusterClient":  (*redis.ClusterClient)(nil),
		"nil *redis.Ring":     (*redis.Ring)(nil),
		"nil UniversalClient": redis.UniversalClient((*redis.Client)(nil)),
	} {
		l, err := slotlimit.New(client, cfg)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "New, %s", name)
		assert.ErrorContains(t, err, "client", "New, %s", name)
		assert.Nil(t, l, name)
		c, err := slotlimit.NewCounter(client, cfg)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "NewCounter, %s", name)
		assert.Nil(t, c, name)
	}

	b := newRealRedis(t)
	hook := &redistest.CommandCounter{}
	b.Client.AddHook(hook)
	for _, bad := range []slotlimit.Config{{}, {Key: "k"}, {Key: "k", Limit: 1, TTL: -1}, {Key: "a}b", Limit: 1}} {
		_, err := slotlimit.New(b.Client, bad)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "%+v", bad)
		_, err = slotlimit.NewCounter(b.Client, bad)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "%+v", bad)
	}
	_, err := slotlimit.New(b.Client, cfg)
	require.NoError(t, err)
	_, err = slotlimit.NewCounter(b.Client, cfg)
	require.NoError(t, err)
	assert.Zero(t, hook.Commands(), "New and NewCounter send nothing")
}

// Every write whose reply is lost for good fails with an error matching
// ErrOutcomeUnknown, the one value every package shares; invalid input,
// which sends nothing, and a WRONGTYPE reply, a known outcome, do not.
func TestLostReplyMatchesErrOutcomeUnknown(t *testing.T) {
	b := newRealRedis(t)
	ctx := context.Background()
	key := testKey(t, b)
	cfg := slotlimit.Config{Key: key, Limit: 5, TTL: time.Minute}
	client, cutter := b.CutClient(t)
	l, err := slotlimit.New(client, cfg)
	require.NoError(t, err)
	other, err := slotlimit.New(b.Client, cfg)
	require.NoError(t, err)
	warmUp(t, other)
	c, err := slotlimit.NewCounter(client, slotlimit.Config{Key: key + ":count", Limit: 5, TTL: time.Minute})
	require.NoError(t, err)
	warm, err := slotlimit.NewCounter(b.Client, c.Config())
	require.NoError(t, err)
	_, err = warm.TryAcquire(ctx) // loads the Counter's scripts
	require.NoError(t, err)
	require.NoError(t, warm.Release(ctx))

	_, err = other.TryAcquire(ctx, "held")
	require.NoError(t, err)
	held := l.Lease("held")

	writes := []struct {
		name string
		key  string
		call func() error
	}{
		{"TryAcquire", key, func() error { _, err := l.TryAcquire(ctx, "a"); return err }},
		{"TryAcquireN", key, func() error { _, err := l.TryAcquireN(ctx, "a", 2); return err }},
		{"Acquire", key, func() error { _, err := l.Acquire(ctx, "a"); return err }},
		{"TryAcquireLease", key, func() error { _, err := l.TryAcquireLease(ctx, 1); return err }},
		{"AcquireLease", key, func() error { _, err := l.AcquireLease(ctx, 1); return err }},
		{"Do", key, func() error { return l.Do(ctx, 1, func(context.Context) error { return nil }) }},
		{"Renew", key, func() error { return l.Renew(ctx, "held") }},
		{"Release", key, func() error { return l.Release(ctx, "held") }},
		{"Lease.Renew", key, func() error { return held.Renew(ctx) }},
		{"Lease.Release", key, func() error { return held.Release(ctx) }},
		{"TryAcquireBatch", key, func() error { _, err := l.TryAcquireBatch(ctx, []string{"a", "b"}); return err }},
		{"ReleaseBatch", key, func() error { _, err := l.ReleaseBatch(ctx, []string{"a", "b"}); return err }},
		{"Counter.TryAcquire", key + ":count", func() error { _, err := c.TryAcquire(ctx); return err }},
		{"Counter.Acquire", key + ":count", func() error { _, err := c.Acquire(ctx); return err }},
		{"Counter.Release", key + ":count", func() error { return c.Release(ctx) }},
	}
	for _, w := range writes {
		cuts := cutter.Cuts()
		cutter.Arm(100, "eval", w.key)
		err := w.call()
		cutter.Arm(0)
		require.Error(t, err, w.name)
		assert.ErrorIs(t, err, slotlimit.ErrOutcomeUnknown, w.name)
		assert.NotErrorIs(t, err, slotlimit.ErrInvalidArgument, w.name)
		assert.Greater(t, cutter.Cuts(), cuts, "%s: its reply was lost", w.name)
	}

	// Errors returned before anything is sent are not unknown outcomes.
	_, err = l.TryAcquire(ctx, "")
	assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder)
	assert.NotErrorIs(t, err, slotlimit.ErrOutcomeUnknown)
	_, err = l.TryAcquireN(ctx, "a", 6)
	assert.ErrorIs(t, err, slotlimit.ErrInvalidWeight)
	assert.NotErrorIs(t, err, slotlimit.ErrOutcomeUnknown)
	err = l.Release(nil, "a") //nolint:staticcheck // a nil ctx is refused
	assert.ErrorIs(t, err, slotlimit.ErrInvalidArgument)
	assert.NotErrorIs(t, err, slotlimit.ErrOutcomeUnknown)
	var zero slotlimit.Limiter
	err = zero.Renew(ctx, "a")
	assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig)
	assert.NotErrorIs(t, err, slotlimit.ErrOutcomeUnknown)

	// A Redis error reply is a known outcome: the call wrote nothing.
	wrong := testKey(t, b)
	require.NoError(t, b.Client.Set(ctx, wrong, "a string", time.Minute).Err())
	lw, err := slotlimit.New(b.Client, slotlimit.Config{Key: wrong, Limit: 1})
	require.NoError(t, err)
	_, err = lw.TryAcquire(ctx, "a")
	require.ErrorContains(t, err, "WRONGTYPE")
	assert.NotErrorIs(t, err, slotlimit.ErrOutcomeUnknown)
	err = lw.Release(ctx, "a")
	require.ErrorContains(t, err, "WRONGTYPE")
	assert.NotErrorIs(t, err, slotlimit.ErrOutcomeUnknown)

	// ErrNotHeld is a known outcome too.
	err = other.Release(ctx, "nobody")
	assert.ErrorIs(t, err, slotlimit.ErrNotHeld)
	assert.NotErrorIs(t, err, slotlimit.ErrOutcomeUnknown)
	assert.EqualError(t, err, `slotlimit: release "`+key+`": not held`)
}

// A Limiter and a lock.Mutex given the same key never read or change
// each other's data: each meets the other's value as a Redis WRONGTYPE
// error, writes nothing, and leaves the other's holder in place.
func TestLimiterAndLockOnOneKeyKeepApart(t *testing.T) {
	b := newRealRedis(t)
	ctx := context.Background()

	t.Run("lock first", func(t *testing.T) {
		key := testKey(t, b)
		m, err := lock.New(b.Client, lock.Config{Key: key, TTL: time.Minute})
		require.NoError(t, err)
		held, err := m.TryLock(ctx)
		require.NoError(t, err)
		before, err := b.Client.Get(ctx, key).Result()
		require.NoError(t, err)

		l := newLimiter(t, b, key, 2, time.Minute)
		_, err = l.TryAcquire(ctx, "a")
		assert.ErrorContains(t, err, "WRONGTYPE")
		assert.ErrorContains(t, l.Release(ctx, "a"), "WRONGTYPE")
		_, err = l.Count(ctx)
		assert.ErrorContains(t, err, "WRONGTYPE")

		after, err := b.Client.Get(ctx, key).Result()
		require.NoError(t, err)
		assert.Equal(t, before, after, "the lock's value is untouched")
		require.NoError(t, held.Unlock(ctx), "the lock's owner still holds it")
	})

	t.Run("limiter first", func(t *testing.T) {
		key := testKey(t, b)
		l := newLimiter(t, b, key, 2, time.Minute)
		_, err := l.TryAcquire(ctx, "a")
		require.NoError(t, err)

		m, err := lock.New(b.Client, lock.Config{Key: key, TTL: time.Minute})
		require.NoError(t, err)
		_, err = m.TryLock(ctx)
		assert.Error(t, err, "the lock does not take a key that holds leases")
		assert.NotErrorIs(t, err, slotlimit.ErrOutcomeUnknown)

		hs, err := l.Holders(ctx)
		require.NoError(t, err)
		require.Len(t, hs, 1)
		assert.Equal(t, "a", hs[0].ID, "the limiter's holder is untouched")
		require.NoError(t, l.Release(ctx, "a"))
	})
}

// A Counter and a Limiter given the same key keep apart too: the
// Counter's integer and the Limiter's leases are different types.
func TestCounterAndLimiterOnOneKeyKeepApart(t *testing.T) {
	b := newRealRedis(t)
	ctx := context.Background()
	key := testKey(t, b)
	c, err := slotlimit.NewCounter(b.Client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute})
	require.NoError(t, err)
	_, err = c.TryAcquire(ctx)
	require.NoError(t, err)

	l := newLimiter(t, b, key, 2, time.Minute)
	_, err = l.TryAcquire(ctx, "a")
	assert.ErrorContains(t, err, "WRONGTYPE")
	n, err := c.Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "the count is untouched")
}
