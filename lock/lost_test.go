package lock_test

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

// A call whose reply is lost for good fails with an error matching
// ErrOutcomeUnknown; the
// same call made again answers as the first run would have, and the lock
// is left as one call leaves it.

// lostForGood loses every reply to the next call that matches words, and
// none after it returns.
func lostForGood(t *testing.T, cutter *redistest.ReplyCutter, call func() error, words ...string) error {
	t.Helper()
	before := cutter.Cuts()
	cutter.Arm(10, words...)
	err := call()
	cutter.Arm(0)
	require.Greater(t, cutter.Cuts(), before, "the reply was cut")
	require.Error(t, err, "the outcome is unknown")
	require.ErrorIs(t, err, lock.ErrOutcomeUnknown)
	require.ErrorIs(t, err, slotlimit.ErrOutcomeUnknown, "one value, shared")
	return err
}

func TestUnlockLostThenRepeated(t *testing.T) {
	redistest.EachCutBackend(t, lock.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		key := b.Key(t, "lock-test:")
		m := newMutexOn(t, client, lock.Config{Key: key, TTL: time.Minute})
		l, err := m.TryLock(ctx)
		require.NoError(t, err)
		err = lostForGood(t, cutter, func() error { return l.Unlock(ctx) }, "evalsha", key)
		assert.NotErrorIs(t, err, lock.ErrNotHeld)
		assert.Zero(t, b.Client.Exists(ctx, key).Val(), "the first run freed it")
		assert.NoError(t, l.Unlock(ctx), "the repeat answers as the first run did")
		assert.ErrorIs(t, l.Unlock(ctx), lock.ErrNotHeld, "a third Unlock, after one that succeeded")
	})
}

func TestRefreshLostThenRepeated(t *testing.T) {
	redistest.EachCutBackend(t, lock.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		key := b.Key(t, "lock-test:")
		m := newMutexOn(t, client, lock.Config{Key: key, TTL: time.Minute})
		l, err := m.TryLock(ctx)
		require.NoError(t, err)
		lostForGood(t, cutter, func() error { return l.Refresh(ctx) }, "evalsha", key)
		require.NoError(t, l.Refresh(ctx))
		select {
		case <-l.Lost():
			t.Fatal("a refresh whose reply was lost lost the lock")
		default:
		}
		require.NoError(t, l.Unlock(ctx))
		assert.Zero(t, b.Client.Exists(ctx, key).Val())
	})
}

func TestTryLockLostLeavesNothing(t *testing.T) {
	b := redistest.Redis(t)
	client, cutter := b.CutClient(t)
	ctx := context.Background()
	key := b.Key(t, "lock-test:")
	m := newMutexOn(t, client, lock.Config{Key: key, TTL: time.Minute})
	// Every send of the transaction is cut; the unlock behind it is not.
	before := cutter.Cuts()
	cutter.Arm(4, "set", key)
	_, err := m.TryLock(ctx)
	require.Error(t, err)
	require.Greater(t, cutter.Cuts(), before)
	cutter.Arm(0)
	assert.NotErrorIs(t, err, lock.ErrNotObtained)
	assert.ErrorIs(t, err, lock.ErrOutcomeUnknown)
	assert.Zero(t, b.Client.Exists(ctx, key).Val(), "no phantom is left")
	l, err := m.TryLock(ctx)
	require.NoError(t, err, "the same call made again takes it")
	require.NoError(t, l.Unlock(ctx))
}

func TestBreakLostThenRepeated(t *testing.T) {
	redistest.EachCutBackend(t, lock.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		key := b.Key(t, "lock-test:")
		owner, err := newMutexOn(t, b.Client, lock.Config{Key: key, TTL: time.Minute}).TryLock(ctx)
		require.NoError(t, err)
		m := newMutexOn(t, client, lock.Config{Key: key, TTL: time.Minute})
		// Break's read goes through; its unlock's reply is lost.
		lostForGood(t, cutter, func() error { return m.Break(ctx, owner.Token()) }, "evalsha", key, owner.Token())
		assert.Zero(t, b.Client.Exists(ctx, key).Val(), "the first run broke it")
		assert.ErrorIs(t, m.Break(ctx, owner.Token()), lock.ErrNotHeld, "as Break's doc says, a repeat finds the owner gone")
	})
}

// A Lock whose try's reply is lost for good fails, and holds nothing: not
// the lock, not a place in the queue.
func TestLockLostLeavesNothing(t *testing.T) {
	redistest.EachCutBackend(t, lock.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		key := b.Key(t, "lock-test:")
		m := newMutexOn(t, client, lock.Config{Key: key, TTL: time.Minute})
		lostForGood(t, cutter, func() error { _, err := m.Lock(ctx); return err }, "evalsha", key, "60000")
		assert.Zero(t, b.Client.Exists(ctx, key).Val(), "the lock it took was freed")

		owner, err := newMutexOn(t, b.Client, lock.Config{Key: key, TTL: time.Minute}).TryLock(ctx)
		require.NoError(t, err)
		lostForGood(t, cutter, func() error { _, err := m.Lock(ctx); return err }, "evalsha", key, "60000")
		assert.Zero(t, b.Client.ZCard(ctx, lock.SideKey(key, "q")).Val(), "its place in the queue was left")
		require.NoError(t, owner.Unlock(ctx))
		assert.Zero(t, b.Client.Exists(ctx, key).Val(), "nobody was handed the lock")
	})
}
