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

// Every call that compares the owner's token takes it marked too, as a
// waiter leaves it (see waitMark): a TryLock sent again finds its own
// marked token and holds the lock, a refresh and a claim keep it, and an
// unlock that finds no queue behind the mark frees it. A waiter marks only
// a token of this package's form, never another client's.
func TestMarkedTokenIsTheOwners(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		m, err := New(b.Client, Config{Key: b.Key(t, "lock-test:"), TTL: time.Minute})
		require.NoError(t, err)
		key := m.cfg.Key
		token := rand.Text()

		require.NoError(t, b.Client.Set(ctx, key, token+waitMark, time.Minute).Err())
		fence, deadline, err := m.obtain(ctx, token)
		require.NoError(t, err)
		assert.Positive(t, fence, "a TryLock sent again finds its own marked token")
		assert.Zero(t, deadline, "and does not know when its first run's lease ends")

		b.Advance(time.Millisecond)
		deadline, err = m.refreshRun(ctx, token)
		require.NoError(t, err)
		assert.Positive(t, deadline, "a refresh keeps the marked lock")
		held, err := m.claimRun(ctx, token, time.Now().Add(time.Minute))
		require.NoError(t, err)
		assert.True(t, held, "a claim keeps it")
		assert.Equal(t, token+waitMark, b.Client.Get(ctx, key).Val(), "still marked")
		info, err := m.inspect(ctx)
		require.NoError(t, err)
		assert.Equal(t, token, info.Token, "Inspect reports the token without the mark")

		held, err = m.unlockRun(ctx, &m.base.Runner, "another"+token, 0)
		require.NoError(t, err)
		assert.False(t, held, "another token is not the owner's")
		held, err = m.unlockRun(ctx, &m.base.Runner, token, 0)
		require.NoError(t, err)
		assert.True(t, held, "the marked owner unlocks; no queue is left, so nobody is handed it")
		assert.Zero(t, b.Client.Exists(ctx, key).Val())

		// Tokens of another form, such as redislock's (22 characters of
		// base64) or a 26-character one with a character that base32 has
		// not, are never marked by a waiter that queues behind them.
		for _, other := range []string{"Ab3_xY9-Qm2Kp7Lw4Zt8Rv", "ABCDEFGHIJKLMNOPQRSTUVWXY1", token[:25]} {
			require.NoError(t, b.Client.Set(ctx, key, other, time.Minute).Err())
			reply, err := m.base.Runner.Run(ctx, obtainQueuedScript, m.queueKeys(), rand.Text(), m.ttl, "3000").Int64Slice()
			require.NoError(t, err)
			assert.Equal(t, statusNotHeld, int(reply[0]), "queued behind %q", other)
			assert.Equal(t, other, b.Client.Get(ctx, key).Val(), "left whole")
		}
		owner := rand.Text()
		require.NoError(t, b.Client.Set(ctx, key, owner, time.Minute).Err())
		_, err = m.base.Runner.Run(ctx, obtainQueuedScript, m.queueKeys(), rand.Text(), m.ttl, "3000").Int64Slice()
		require.NoError(t, err)
		assert.Equal(t, owner+waitMark, b.Client.Get(ctx, key).Val(), "an owner of this package is marked")
	})
}
