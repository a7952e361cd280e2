package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// Every write of a lock takes effect once, however often go-redis sends
// it: each test loses one reply after the server ran the call, so that
// go-redis, with its default retries, sends it again, and checks that the
// effect and the answer are those of one call.

// A TryLock whose reply is lost, and which go-redis sends again, holds the
// lock it took: the second run finds the caller's own token and answers
// as the first, so the caller gets a Lock that can unlock it.
func TestTryLockResentHoldsOnce(t *testing.T) {
	redistest.EachCutBackend(t, lock.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		key := b.Key(t, "lock-test:")
		before := newMutexOn(t, b.Client, lock.Config{Key: key, TTL: time.Minute})
		prev, err := before.TryLock(ctx)
		require.NoError(t, err)
		require.NoError(t, prev.Unlock(ctx))

		m := newMutexOn(t, client, lock.Config{Key: key, TTL: time.Minute})
		cutter.Arm(1, "set", key)
		l, err := m.TryLock(ctx)
		cutter.RequireOneMore(t, 0)
		if _, cluster := client.(*redis.ClusterClient); cluster && err != nil {
			// go-redis sends a transaction to a Cluster node once: the
			// outcome is unknown, and TryLock unlocks what it may hold.
			assert.NotErrorIs(t, err, lock.ErrNotObtained)
			assert.Zero(t, b.Client.Exists(ctx, key).Val(), "no phantom is left")
			return
		}
		require.NoError(t, err, "a re-sent TryLock found its own token")
		assert.Equal(t, l.Token(), b.Client.Get(ctx, key).Val())
		assert.Greater(t, l.Fence(), prev.Fence(), "a fence above the last owner's")
		fence := l.Fence()

		_, err = m.TryLock(ctx)
		assert.ErrorIs(t, err, lock.ErrNotObtained, "another caller is still kept out")
		// The lease ran from the first run, which the second could not
		// see: until a Refresh, the Lock does not know its deadline, and an
		// Unlock sent twice frees it but reports ErrNotHeld, as its doc says.
		cutter.Arm(1, "evalsha", key)
		assert.ErrorIs(t, l.Unlock(ctx), lock.ErrNotHeld)
		cutter.RequireOneMore(t, 1)
		assert.Zero(t, b.Client.Exists(ctx, key).Val(), "no phantom is left")

		next, err := before.TryLock(ctx)
		require.NoError(t, err)
		assert.Greater(t, next.Fence(), fence, "the next owner's fence is higher")
		require.NoError(t, next.Unlock(ctx))
	})
}

// A Lock whose reply is lost holds the lock it took, and a waiter whose
// try was sent twice keeps one place in the queue.
func TestLockResentHoldsOnce(t *testing.T) {
	redistest.EachCutBackend(t, lock.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		key := b.Key(t, "lock-test:")
		m := newMutexOn(t, client, lock.Config{Key: key, TTL: time.Minute})
		cutter.Arm(1, "evalsha", key)
		l, err := m.Lock(ctx)
		cutter.RequireOneMore(t, 0)
		require.NoError(t, err)
		assert.Equal(t, l.Token(), b.Client.Get(ctx, key).Val())

		// Queued: the re-sent try keeps the waiter's one entry.
		cutter.Arm(1, "evalsha", key)
		waiter := startLock(t, ctx, b, m, 1)
		cutter.RequireOneMore(t, 1)
		assert.Equal(t, "1", b.Client.HGet(ctx, lock.SideKey(key, "qw"), "").Val(), "one arrival")
		require.NoError(t, l.Unlock(ctx))
		w, err := waiter.result(5 * time.Second)
		require.NoError(t, err)
		assert.Greater(t, w.Fence(), l.Fence())
		require.NoError(t, w.Unlock(ctx))
		assert.Zero(t, b.Client.Exists(ctx, key, lock.SideKey(key, "q")).Val())
	})
}

// A re-sent Refresh answers as the first run did, and extends the lease
// once.
func TestRefreshResentAnswersTheSame(t *testing.T) {
	redistest.EachCutBackend(t, lock.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		key := b.Key(t, "lock-test:")
		m := newMutexOn(t, client, lock.Config{Key: key, TTL: time.Minute})
		l, err := m.TryLock(ctx)
		require.NoError(t, err)
		cutter.Arm(1, "evalsha", key)
		require.NoError(t, l.Refresh(ctx))
		cutter.RequireOneMore(t, 0)
		assert.Greater(t, b.Client.PTTL(ctx, key).Val(), 59*time.Second)
		require.NoError(t, l.Unlock(ctx))
	})
}

// An Unlock whose reply is lost, sent again after the first run freed the
// lock, reports success: the lock's lease had not run out, so only this
// call can have freed it.
func TestUnlockResentReportsSuccess(t *testing.T) {
	redistest.EachCutBackend(t, lock.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		key := b.Key(t, "lock-test:")
		m := newMutexOn(t, client, lock.Config{Key: key, TTL: time.Minute})
		for i, refreshed := range []bool{false, true} {
			l, err := m.TryLock(ctx)
			require.NoError(t, err)
			if refreshed {
				require.NoError(t, l.Refresh(ctx))
			}
			cutter.Arm(1, "evalsha", key)
			assert.NoError(t, l.Unlock(ctx), "refreshed %v", refreshed)
			cutter.RequireOneMore(t, i)
			assert.Zero(t, b.Client.Exists(ctx, key).Val())
			assert.ErrorIs(t, l.Unlock(ctx), lock.ErrNotHeld, "a second Unlock of the caller's own")
		}

		// A lapsed lock is reported not held, sent once or twice.
		l, err := newMutexOn(t, client, lock.Config{Key: key, TTL: 20 * time.Millisecond}).TryLock(ctx)
		require.NoError(t, err)
		time.Sleep(50 * time.Millisecond)
		cutter.Arm(1, "evalsha", key)
		assert.ErrorIs(t, l.Unlock(ctx), lock.ErrNotHeld)
		cutter.RequireOneMore(t, 2)
	})
}

// An Unlock that hands the lock to a waiter, whose reply is lost, hands it
// once and reports success; the waiter gets it.
func TestUnlockResentHandsOffOnce(t *testing.T) {
	redistest.EachCutBackend(t, lock.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		key := b.Key(t, "lock-test:")
		m := newMutexOn(t, client, lock.Config{Key: key, TTL: time.Minute})
		owner, err := m.TryLock(ctx)
		require.NoError(t, err)
		waiting := newMutexOn(t, b.Client, lock.Config{Key: key, TTL: time.Minute})
		first, second := startLock(t, ctx, b, waiting, 1), startLock(t, ctx, b, waiting, 2)
		cutter.Arm(1, "evalsha", "publish") // the hand-off: only it names the notice command
		require.NoError(t, owner.Unlock(ctx))
		cutter.RequireOneMore(t, 0)
		l, err := first.result(900 * time.Millisecond) // a waiter's own retry comes after a second
		require.NoError(t, err, "the first waiter is handed the lock")
		assert.Equal(t, int64(1), b.Client.ZCard(ctx, lock.SideKey(key, "q")).Val(), "one waiter was served")
		assert.Greater(t, l.Fence(), owner.Fence())
		require.NoError(t, l.Unlock(ctx))
		l, err = second.result(5 * time.Second)
		require.NoError(t, err)
		require.NoError(t, l.Unlock(ctx))
	})
}

// A handed lock's claim, sent twice, claims it once: the waiter holds it
// for its full lease, and knows until when.
func TestClaimResentHolds(t *testing.T) {
	redistest.EachCutBackend(t, lock.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		key := b.Key(t, "lock-test:")
		owner, err := newMutexOn(t, b.Client, lock.Config{Key: key, TTL: time.Minute}).TryLock(ctx)
		require.NoError(t, err)
		waiter := startLock(t, ctx, b, newMutexOn(t, client, lock.Config{Key: key, TTL: time.Minute}), 1)
		time.Sleep(200 * time.Millisecond) // the waiter's subscription settles
		cutter.Arm(1, "evalsha", key)      // the next script it sends is its claim
		require.NoError(t, owner.Unlock(ctx))
		w, err := waiter.result(5 * time.Second)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return !cutter.Armed() }, 5*time.Second, time.Millisecond)
		cutter.RequireOneMore(t, 0)
		require.Eventually(t, func() bool { return b.Client.PTTL(ctx, key).Val() > 50*time.Second }, 2*time.Second, time.Millisecond, "claimed for its full lease")
		select {
		case <-w.Lost():
			t.Fatal("the claim was lost")
		default:
		}
		// Its lease's deadline is the one the notice stated: an Unlock sent
		// twice reports success.
		cutter.Arm(1, "evalsha", key)
		require.NoError(t, w.Unlock(ctx))
		cutter.RequireOneMore(t, 1)
		assert.Zero(t, b.Client.Exists(ctx, key).Val())
	})
}

// Break, sent twice, breaks the lock once, and reports what its doc says:
// success, as its first run did.
func TestBreakResent(t *testing.T) {
	redistest.EachCutBackend(t, lock.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		key := b.Key(t, "lock-test:")
		owner, err := newMutexOn(t, b.Client, lock.Config{Key: key, TTL: time.Minute}).TryLock(ctx)
		require.NoError(t, err)
		m := newMutexOn(t, client, lock.Config{Key: key, TTL: time.Minute})
		info, err := m.Inspect(ctx)
		require.NoError(t, err)
		cutter.Arm(1, "evalsha", key)
		err = m.Break(ctx, info.Token)
		cutter.RequireOneMore(t, 0)
		require.NoError(t, err, "the lease it read had not run out: only this call broke it")
		assert.Zero(t, b.Client.Exists(ctx, key).Val())
		assert.ErrorIs(t, owner.Refresh(ctx), lock.ErrNotHeld, "the owner finds it broken")
	})
}

// A Lock that gives up leaves the queue once, its leave sent twice: the
// next Unlock hands the lock to the live waiter behind it.
func TestLockThatGaveUpLeavesOnceResent(t *testing.T) {
	redistest.EachCutBackend(t, lock.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		key := b.Key(t, "lock-test:")
		m := newMutexOn(t, b.Client, lock.Config{Key: key, TTL: time.Minute})
		owner, err := m.TryLock(ctx)
		require.NoError(t, err)
		giveUp, stop := context.WithCancel(ctx)
		defer stop()
		giving := startLock(t, giveUp, b, newMutexOn(t, client, lock.Config{Key: key, TTL: time.Minute}), 1)
		live := startLock(t, ctx, b, m, 2)
		cutter.Arm(1, "evalsha", "publish") // the leave: the only script it sends that names the notice command
		stop()
		_, err = giving.result(5 * time.Second)
		assert.ErrorIs(t, err, context.Canceled)
		cutter.RequireOneMore(t, 0)
		assert.Equal(t, int64(1), b.Client.ZCard(ctx, lock.SideKey(key, "q")).Val(), "the waiter that gave up left the queue")
		require.NoError(t, owner.Unlock(ctx))
		l, err := live.result(900 * time.Millisecond) // a waiter's own retry comes after a second
		require.NoError(t, err, "the live waiter is handed the lock")
		require.NoError(t, l.Unlock(ctx))
	})
}
