package lock

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A waiter that misses the notice of a lock handed to it takes the lock
// at its next try, for its full lease time, instead of waiting in the
// queue until the handed lock's claim time runs out.
func TestTryAfterMissedNoticeTakesHandedLock(t *testing.T) {
	ctx := context.Background()
	b := redistest.Miniredis(t) // its clock stands still: the claim time never runs out
	m, err := New(b.Client, Config{Key: b.Key(t, "lock-test:"), TTL: time.Minute})
	require.NoError(t, err)
	obtain := func(token string) []int64 {
		reply, err := m.base.Runner.Run(ctx, obtainQueuedScript, m.queueKeys(), token, m.ttl, "3000").Int64Slice()
		require.NoError(t, err)
		return reply
	}
	owner := rand.Text() // a waiter marks the token of an owner of this package
	require.Positive(t, obtain(owner)[0], "the owner takes the lock")
	require.LessOrEqual(t, obtain("waiter")[0], int64(0), "the waiter queues")
	require.Equal(t, owner+waitMark, b.Client.Get(ctx, m.cfg.Key).Val(), "the waiter marked the owner's token")
	held, err := m.unlockRun(ctx, &m.base.Runner, owner, 0)
	require.NoError(t, err)
	require.True(t, held)
	require.Equal(t, "waiter", b.Client.Get(ctx, m.cfg.Key).Val(), "handed to the waiter")

	reply := obtain("waiter") // its notice was lost
	assert.Positive(t, reply[0], "the waiter holds the lock, with a fence")
	assert.Greater(t, b.Client.PTTL(ctx, m.cfg.Key).Val(), 50*time.Second, "for its full lease time")
	assert.Zero(t, b.Client.ZCard(ctx, m.base.Keys[keyQueue]).Val(), "and has left the queue")
}

// A waiter that gives up just as the lock is handed to it, before its
// notice is read, hands the lock on to the next waiter, or frees it, as it
// leaves; it does not keep it for the claim time.
func TestWaiterThatLeavesHandsOnWhatItWasHanded(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		m, err := New(b.Client, Config{Key: b.Key(t, "lock-test:"), TTL: time.Minute})
		require.NoError(t, err)
		obtain := func(token string) int64 {
			reply, err := m.base.Runner.Run(ctx, obtainQueuedScript, m.queueKeys(), token, m.ttl, "3000").Int64Slice()
			require.NoError(t, err)
			return reply[0]
		}
		for _, next := range []bool{true, false} {
			owner := rand.Text() // a waiter marks the token of an owner of this package
			require.Positive(t, obtain(owner), "the owner takes the lock")
			require.LessOrEqual(t, obtain("gave-up"), int64(0), "a waiter queues")
			if next {
				require.LessOrEqual(t, obtain("next"), int64(0), "another queues behind it")
			}
			held, err := m.unlockRun(ctx, &m.base.Runner, owner, 0)
			require.NoError(t, err)
			require.True(t, held)
			handed := "gave-up"
			if next {
				handed += waitMark // marked: another still waits
			}
			require.Equal(t, handed, b.Client.Get(ctx, m.cfg.Key).Val(), "handed to the first waiter")

			(&Lock{mutex: m, token: "gave-up"}).leave(ctx)
			if next {
				assert.Equal(t, "next", b.Client.Get(ctx, m.cfg.Key).Val(), "handed on")
				assert.Zero(t, b.Client.ZCard(ctx, m.base.Keys[keyQueue]).Val())
				(&Lock{mutex: m, token: "next"}).leave(ctx)
			}
			assert.Zero(t, b.Client.Exists(ctx, m.base.Keys[keyLock], m.base.Keys[keyQueue], m.base.Keys[keyQueueDeadlines]).Val(), "freed, and no queue is left")
		}
	})
}
