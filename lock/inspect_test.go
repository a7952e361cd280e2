package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// Inspect shows the owner's token, its time left and its waiters, and a
// fence floor that lies between the owner's fence and the next owner's.
func TestInspectShowsOwnerAndWaiters(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		m, key := newMutex(t, b, time.Minute)

		info, err := m.Inspect(ctx)
		require.NoError(t, err)
		assert.False(t, info.Held())
		assert.Equal(t, lock.Info{FenceFloor: info.FenceFloor}, info)
		assert.Positive(t, info.FenceFloor)

		b.Advance(time.Millisecond)
		owner, err := m.TryLock(ctx)
		require.NoError(t, err)
		b.Advance(time.Millisecond)
		info, err = m.Inspect(ctx)
		require.NoError(t, err)
		assert.True(t, info.Held())
		assert.Equal(t, owner.Token(), info.Token)
		assert.True(t, info.TTL > 0 && info.TTL <= time.Minute, "TTL %v", info.TTL)
		assert.Zero(t, info.Waiters)
		assert.Greater(t, info.FenceFloor, owner.Fence(), "the owner's fence is below the floor")

		got := make(chan *lock.Lock, 1)
		go func() {
			l, err := m.Lock(ctx)
			assert.NoError(t, err)
			got <- l
		}()
		require.Eventually(t, func() bool {
			info, err := m.Inspect(ctx)
			return err == nil && info.Waiters == 1
		}, 5*time.Second, time.Millisecond)

		b.Advance(time.Millisecond)
		require.NoError(t, owner.Unlock(ctx))
		var next *lock.Lock
		select {
		case next = <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("the waiter was not handed the lock")
		}
		assert.Greater(t, next.Fence(), info.FenceFloor, "the next owner's fence is above the floor")
		require.NoError(t, next.Unlock(ctx))

		// A key with no expiry, as another client may leave it.
		require.NoError(t, b.Client.Set(ctx, key, "theirs", 0).Err())
		info, err = m.Inspect(ctx)
		require.NoError(t, err)
		assert.Equal(t, "theirs", info.Token)
		assert.Negative(t, info.TTL, "no expiry")
	})
}

// Break frees the lock of the owner it names as that owner's Unlock would,
// handing it to the first waiter; it leaves a lock that changed hands, or
// is free, as it is.
func TestBreakHandsLockToWaiterAsUnlockWould(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		m, key := newMutex(t, b, time.Minute)

		assert.ErrorIs(t, m.Break(ctx, "nobody"), lock.ErrNotHeld, "a free lock")

		owner, err := m.TryLock(ctx)
		require.NoError(t, err)
		got := make(chan *lock.Lock, 1)
		go func() {
			l, err := m.Lock(ctx)
			assert.NoError(t, err)
			got <- l
		}()
		require.Eventually(t, func() bool {
			info, err := m.Inspect(ctx)
			return err == nil && info.Waiters == 1
		}, 5*time.Second, time.Millisecond)

		assert.ErrorIs(t, m.Break(ctx, "not the owner"), lock.ErrNotHeld, "another owner's token")
		assert.ErrorIs(t, m.Break(ctx, ""), lock.ErrInvalidArgument)
		assert.Equal(t, owner.Token()+"+", b.Client.Get(ctx, key).Val(), "still the owner's, marked by the waiter that queued")
		info, err := m.Inspect(ctx)
		require.NoError(t, err)
		assert.Equal(t, owner.Token(), info.Token, "Inspect reports the token without the mark")

		b.Advance(time.Millisecond)
		require.NoError(t, m.Break(ctx, owner.Token()))
		var waiter *lock.Lock
		select {
		case waiter = <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("the waiter was not handed the lock")
		}
		assert.Greater(t, waiter.Fence(), owner.Fence())
		assert.Eventually(t, func() bool { return b.Client.Get(ctx, key).Val() == waiter.Token() }, 5*time.Second, time.Millisecond)
		assert.ErrorIs(t, owner.Refresh(ctx), lock.ErrNotHeld, "the broken owner finds out on its next call")

		assert.ErrorIs(t, m.Break(ctx, owner.Token()), lock.ErrNotHeld, "broken already")

		// Nobody waits: the key goes; another client's value breaks too.
		require.NoError(t, m.Break(ctx, waiter.Token()))
		assert.Zero(t, b.Client.Exists(ctx, key).Val())
		require.NoError(t, b.Client.Set(ctx, key, "other-client", time.Minute).Err())
		require.NoError(t, m.Break(ctx, "other-client"))
		assert.Zero(t, b.Client.Exists(ctx, key).Val())

		var zero lock.Mutex
		err = zero.Break(ctx, "x")
		assert.ErrorIs(t, err, lock.ErrInvalidConfig)
		_, err = zero.Inspect(ctx)
		assert.ErrorIs(t, err, lock.ErrInvalidConfig)
	})
}
