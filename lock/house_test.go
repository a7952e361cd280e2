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

// New refuses a nil client, untyped or typed nil, with ErrInvalidConfig,
// and neither it nor a refused Config sends anything.
func TestNewRefusesNilClientAndSendsNothing(t *testing.T) {
	for _, client := range []redis.UniversalClient{nil, (*redis.Client)(nil), (*redis.ClusterClient)(nil), (*redis.Ring)(nil)} {
		m, err := lock.New(client, lock.Config{Key: "k"})
		assert.ErrorIs(t, err, lock.ErrInvalidConfig, "%T", client)
		assert.Nil(t, m)
		assert.ErrorContains(t, err, "client is nil")
	}

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

// Errors returned before anything is sent, a refusal, a lease found gone
// and a Redis error reply are known outcomes: none matches
// ErrOutcomeUnknown. Invalid input matches ErrInvalidArgument.
func TestKnownOutcomesDoNotMatchOutcomeUnknown(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		m, key := newMutex(t, b, time.Minute)
		l, err := m.TryLock(ctx)
		require.NoError(t, err)

		var nilCtx context.Context
		done, cancel := context.WithCancel(ctx)
		cancel()
		known := map[string]error{}
		_, known["try lock, nil ctx"] = m.TryLock(nilCtx)
		_, known["lock, nil ctx"] = m.Lock(nilCtx)
		_, known["lock, ctx done before the call"] = m.Lock(done)
		known["refresh, nil ctx"] = l.Refresh(nilCtx)
		known["unlock, nil ctx"] = l.Unlock(nilCtx)
		known["break, empty token"] = m.Break(ctx, "")
		_, known["inspect, nil ctx"] = m.Inspect(nilCtx)
		_, known["nil mutex"] = (*lock.Mutex)(nil).TryLock(ctx)
		_, known["refused"] = m.TryLock(ctx)
		known["unlock, nil lock"] = (*lock.Lock)(nil).Unlock(ctx)
		for what, err := range known {
			require.Error(t, err, what)
			assert.NotErrorIs(t, err, lock.ErrOutcomeUnknown, what)
		}
		for _, what := range []string{"try lock, nil ctx", "lock, nil ctx", "refresh, nil ctx", "unlock, nil ctx", "break, empty token", "inspect, nil ctx"} {
			assert.ErrorIs(t, known[what], lock.ErrInvalidArgument, what)
		}
		assert.ErrorIs(t, known["lock, ctx done before the call"], context.Canceled)
		assert.ErrorIs(t, known["nil mutex"], lock.ErrInvalidConfig)
		assert.ErrorIs(t, known["refused"], lock.ErrNotObtained)
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
