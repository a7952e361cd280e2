package lock

import (
	"context"
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
		reply, err := m.runner.Run(ctx, obtainQueuedScript, m.keys, token, m.ttl, "3000").Int64Slice()
		require.NoError(t, err)
		return reply
	}
	require.Positive(t, obtain("owner")[0], "the owner takes the lock")
	require.LessOrEqual(t, obtain("waiter")[0], int64(0), "the waiter queues")
	owner := &Lock{mutex: m, token: "owner"}
	held, err := owner.release(ctx, &m.runner)
	require.NoError(t, err)
	require.True(t, held)
	require.Equal(t, "waiter", b.Client.Get(ctx, m.cfg.Key).Val(), "handed to the waiter")

	reply := obtain("waiter") // its notice was lost
	assert.Positive(t, reply[0], "the waiter holds the lock, with a fence")
	assert.Greater(t, b.Client.PTTL(ctx, m.cfg.Key).Val(), 50*time.Second, "for its full lease time")
	assert.Zero(t, b.Client.ZCard(ctx, m.keys[keyQueue]).Val(), "and has left the queue")
}
