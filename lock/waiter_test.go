package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// A Lock that gives up leaves the queue as it returns: the next Unlock
// hands the lock to a live waiter at once, not to the one that left.
func TestLockThatGaveUpIsNotHandedTheLock(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		m, key := newMutex(t, b, time.Minute)
		owner, err := m.TryLock(ctx)
		require.NoError(t, err)

		giveUp, stop := context.WithCancel(ctx)
		defer stop()
		giving := startLock(t, giveUp, b, m, 1)
		live := startLock(t, ctx, b, m, 2)
		stop()
		_, err = giving.result(5 * time.Second)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, int64(1), b.Client.ZCard(ctx, lock.SideKey(key, "q")).Val(), "the waiter that gave up left the queue")

		b.Advance(time.Millisecond)
		require.NoError(t, owner.Unlock(ctx))
		l, err := live.result(900 * time.Millisecond) // a waiter's own retry comes after a second
		require.NoError(t, err, "the live waiter is handed the lock")
		assert.Greater(t, l.Fence(), owner.Fence())
		require.NoError(t, l.Unlock(ctx))
	})
}

// Each method's error names the method and its package once.
func TestErrorsNameTheirMethod(t *testing.T) {
	b := redistest.Redis(t)
	ctx := context.Background()
	m, key := newMutex(t, b, 20*time.Millisecond)
	l, err := m.TryLock(ctx)
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond)
	err = l.Refresh(ctx)
	require.ErrorIs(t, err, lock.ErrNotHeld)
	assert.Equal(t, `lock: refresh "`+key+`": not held`, err.Error())
	err = l.Unlock(ctx)
	require.ErrorIs(t, err, lock.ErrNotHeld)
	assert.Equal(t, `lock: unlock "`+key+`": not held`, err.Error())

	long := newMutexOn(t, b.Client, lock.Config{Key: key, TTL: time.Minute})
	held, err := long.TryLock(ctx)
	require.NoError(t, err)
	_, err = long.TryLock(ctx)
	require.ErrorIs(t, err, lock.ErrNotObtained)
	assert.Equal(t, `lock: try lock "`+key+`": not obtained`, err.Error())
	require.NoError(t, held.Unlock(ctx))

	require.NoError(t, b.Client.RPush(ctx, key, "x").Err())
	defer b.Client.Del(ctx, key)
	for name, call := range map[string]func() error{
		"try lock": func() error { _, err := long.TryLock(ctx); return err },
		"lock":     func() error { _, err := long.Lock(ctx); return err },
		"break":    func() error { return long.Break(ctx, "x") },
	} {
		err := call()
		require.Error(t, err, name)
		assert.Regexp(t, `^lock: `+name+` "`+key+`": WRONGTYPE`, err.Error())
		assert.False(t, errors.Is(err, lock.ErrNotHeld))
	}
}

// A TTL meant as "for ever", and a ReplicaTimeout WAIT would take as for
// ever, are refused.
func TestTTLAboveMaxIsRefused(t *testing.T) {
	b := redistest.Miniredis(t)
	for _, ttl := range []time.Duration{lock.MaxTTL + time.Millisecond, 1<<63 - 1} {
		_, err := lock.New(b.Client, lock.Config{Key: "k", TTL: ttl})
		assert.ErrorIs(t, err, lock.ErrInvalidConfig, "%v", ttl)
	}
	m, err := lock.New(b.Client, lock.Config{Key: "k", TTL: lock.MaxTTL})
	require.NoError(t, err)
	assert.Equal(t, lock.MaxTTL, m.Config().TTL)

	// WAIT takes a timeout of 0 ms as "for ever".
	_, err = lock.New(b.Client, lock.Config{Key: "k", Replicas: 1, ReplicaTimeout: 500 * time.Microsecond})
	assert.ErrorIs(t, err, lock.ErrInvalidConfig)
}

// A nil context is refused with ErrInvalidArgument, and nothing is sent.
func TestNilContextIsRefused(t *testing.T) {
	b := redistest.Miniredis(t)
	m, key := newMutex(t, b, time.Minute)
	l, err := m.TryLock(context.Background())
	require.NoError(t, err)
	var nilCtx context.Context
	_, err = m.TryLock(nilCtx)
	assert.ErrorIs(t, err, lock.ErrInvalidArgument)
	_, err = m.Lock(nilCtx)
	assert.ErrorIs(t, err, lock.ErrInvalidArgument)
	_, err = m.Inspect(nilCtx)
	assert.ErrorIs(t, err, lock.ErrInvalidArgument)
	assert.ErrorIs(t, m.Break(nilCtx, l.Token()), lock.ErrInvalidArgument)
	assert.ErrorIs(t, l.Refresh(nilCtx), lock.ErrInvalidArgument)
	assert.ErrorIs(t, l.Unlock(nilCtx), lock.ErrInvalidArgument)
	assert.ErrorIs(t, context.Cause(l.KeepAlive(nilCtx)), lock.ErrInvalidArgument)
	assert.Equal(t, l.Token(), b.Client.Get(context.Background(), key).Val(), "still held")
	require.NoError(t, l.Unlock(context.Background()))
}
