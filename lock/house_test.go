package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// New refuses a Config it cannot work with, and neither it nor a refused
// Config sends anything or connects. (The conformance suite checks the
// nil clients.)
func TestNewSendsNothing(t *testing.T) {
	b := redistest.Redis(t)
	client := redis.NewClient(&redis.Options{Addr: b.Client.(*redis.Client).Options().Addr})
	defer client.Close()
	hook := &redistest.CommandCounter{}
	client.AddHook(hook)
	_, err := lock.New(client, lock.Config{Key: "k", TTL: -time.Second})
	assert.ErrorIs(t, err, lock.ErrInvalidConfig)
	m, err := lock.New(client, lock.Config{Key: b.Key(t, "lock-test:")})
	require.NoError(t, err)
	require.NotNil(t, m)
	assert.Zero(t, hook.Commands(), "New sends nothing")
	assert.Zero(t, hook.Dials(), "New connects to nothing")
}

// Known outcomes the conformance suite does not make do not match
// ErrOutcomeUnknown: a ctx done before the call, an empty token, a
// refusal. A Redis error reply is passed on as a redis.Error, and writes
// nothing.
func TestKnownOutcomesDoNotMatchOutcomeUnknown(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		m, key := newMutex(t, b, time.Minute)
		l, err := m.TryLock(ctx)
		require.NoError(t, err)

		done, cancel := context.WithCancel(ctx)
		cancel()
		_, err = m.Lock(done)
		assert.ErrorIs(t, err, context.Canceled, "a ctx done before the call")
		assert.NotErrorIs(t, err, lock.ErrOutcomeUnknown, "a ctx done before the call")
		err = m.Break(ctx, "")
		assert.ErrorIs(t, err, lock.ErrInvalidArgument, "an empty token")
		assert.NotErrorIs(t, err, lock.ErrOutcomeUnknown, "an empty token")
		_, err = m.TryLock(ctx)
		assert.ErrorIs(t, err, lock.ErrNotObtained, "refused")
		assert.NotErrorIs(t, err, lock.ErrOutcomeUnknown, "refused")
		require.NoError(t, l.Unlock(ctx))

		require.NoError(t, b.Client.RPush(ctx, key, "x").Err())
		_, err = m.TryLock(ctx)
		assert.Error(t, err)
		assert.NotErrorIs(t, err, lock.ErrOutcomeUnknown, "WRONGTYPE is a known outcome")
		var reply redis.Error
		assert.True(t, errors.As(err, &reply), "the Redis error is passed on: %v", err)
		assert.Equal(t, []string{"x"}, b.Client.LRange(ctx, key, 0, -1).Val(), "nothing written")
	})
}

// lock.ErrOutcomeUnknown is the value every package shares.
func TestOutcomeUnknownIsShared(t *testing.T) {
	assert.ErrorIs(t, lock.ErrOutcomeUnknown, slotlimit.ErrOutcomeUnknown)
	assert.True(t, lock.ErrOutcomeUnknown == slotlimit.ErrOutcomeUnknown)
}
