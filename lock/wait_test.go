package lock_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// countEvals counts the scripts a client runs; an EVALSHA refused with
// NOSCRIPT, which go-redis sends again as EVAL, does not count.
type countEvals struct{ n atomic.Int64 }

func (c *countEvals) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *countEvals) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if name := cmd.Name(); (name == "evalsha" || name == "eval") && !redis.HasErrorPrefix(err, "NOSCRIPT") {
			c.n.Add(1)
		}
		return err
	}
}
func (c *countEvals) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// Unlock hands the lock to the first waiter and wakes it alone: it
// returns on the notice, long before its next try would come, and the
// other waiters send nothing meanwhile.
func TestUnlockWakesOneWaiter(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		m, key := newMutex(t, b, time.Minute)
		owner, err := m.TryLock(ctx)
		require.NoError(t, err)

		client := b.NewClient(t)
		tries := &countEvals{}
		client.AddHook(tries)
		waiting := newMutexOn(t, client, lock.Config{Key: key, TTL: time.Minute})
		const waiters = 3
		got := make(chan *lock.Lock, waiters)
		var wg sync.WaitGroup
		for range waiters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := waiting.Lock(ctx)
				if err == nil {
					got <- l
				}
			}()
		}
		queue := lock.SideKey(key, "q")
		require.Eventually(t, func() bool { return b.Client.ZCard(ctx, queue).Val() == waiters }, 5*time.Second, time.Millisecond)
		// Until its subscription is confirmed a waiter tries every 100ms at
		// most, and the confirmation wakes it to try once more: wait until
		// the waiters' tries settle.
		before := tries.n.Load()
		for settled := false; !settled; {
			time.Sleep(150 * time.Millisecond)
			now := tries.n.Load()
			settled, before = now == before, now
		}
		b.Advance(time.Millisecond) // miniredis's clock moves only when told to
		unlocked := time.Now()
		require.NoError(t, owner.Unlock(ctx))
		var first *lock.Lock
		select {
		case first = <-got:
		case <-time.After(900 * time.Millisecond): // a waiter's own retry comes after a second
			t.Fatal("no waiter was woken by the unlock")
		}
		t.Logf("unlock to Lock's return: %v", time.Since(unlocked))
		assert.Greater(t, first.Fence(), owner.Fence())
		time.Sleep(100 * time.Millisecond)
		assert.Len(t, got, 0, "one waiter got the lock")
		// The woken waiter's claim is the one script sent meanwhile.
		assert.LessOrEqual(t, tries.n.Load()-before, int64(1), "the other waiters were not woken")
		assert.Equal(t, first.Token()+"+", b.Client.Get(ctx, key).Val(), "marked: the others still wait")
		assert.Greater(t, b.Client.PTTL(ctx, key).Val(), 30*time.Second, "claimed for its full TTL")

		// Each unlock hands the lock on, in turn.
		last := first
		for range waiters - 1 {
			b.Advance(time.Millisecond)
			require.NoError(t, last.Unlock(ctx))
			next := <-got
			assert.Greater(t, next.Fence(), last.Fence())
			last = next
		}
		require.NoError(t, last.Unlock(ctx))
		wg.Wait()
		assert.Zero(t, b.Client.Exists(ctx, key, queue).Val(), "no key is left")
	})
}

// A waiter that gives up holds nothing and leaves the queue; an owner that
// lapses wakes a waiter when it lapses.
func TestLockHonoursContextAndLapse(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		m, key := newMutex(t, b, 200*time.Millisecond)
		owner, err := m.TryLock(ctx)
		require.NoError(t, err)

		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, err = m.Lock(short)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		// The waiter marks the owner's token if it queued before its ctx
		// ended, which a slow machine may not let it do.
		assert.Equal(t, owner.Token(), strings.TrimSuffix(b.Client.Get(ctx, key).Val(), "+"), "the owner keeps it")

		done, cancel := context.WithCancel(ctx)
		cancel()
		_, err = m.Lock(done)
		assert.ErrorIs(t, err, context.Canceled)

		if !b.Real {
			return // miniredis's clock moves only when told to
		}
		wait, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		l, err := m.Lock(wait) // the owner never unlocks: its lease lapses
		require.NoError(t, err)
		assert.Greater(t, l.Fence(), owner.Fence())
		assert.ErrorIs(t, owner.Unlock(ctx), lock.ErrNotHeld)
		require.NoError(t, l.Unlock(ctx))
	})
}

// SCRIPT FLUSH under load: every call still runs once, and every lock is
// freed.
func TestScriptFlushUnderLoad(t *testing.T) {
	b := redistest.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	admin := b.NewClient(t)
	stop := make(chan struct{})
	flushed := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				flushed <- n
				return
			default:
			}
			admin.ScriptFlush(ctx)
			n++
			time.Sleep(time.Millisecond)
		}
	}()
	var wg sync.WaitGroup
	var failures atomic.Int64
	keys := make([]string, 8)
	for i := range keys {
		m, key := newMutex(t, b, time.Minute)
		keys[i] = key
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				l, err := m.Lock(ctx)
				if err != nil {
					failures.Add(1)
					t.Error(err)
					return
				}
				if err := l.Unlock(ctx); err != nil {
					failures.Add(1)
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	assert.Positive(t, <-flushed, "the cache was flushed meanwhile")
	assert.Zero(t, failures.Load())
	assert.Zero(t, b.Client.Exists(ctx, keys...).Val(), "every lock was freed")
}
