package lock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// On a Ring, TryLock's transaction goes whole to the key's shard: a Ring
// routes each command by its first key, and MULTI, TIME and EXEC have
// none, so sent through the Ring they would go to any shard, leaving a
// SET outside its transaction and a connection inside MULTI. Every lock
// of several keys, spread over two shards, is taken and freed.
func TestTryLockOnARing(t *testing.T) {
	a, b := redistest.StartServer(t), redistest.StartServer(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": a.Addr, "b": b.Addr}})
	defer ring.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	failed := 0
	for i := range 8 {
		key := fmt.Sprintf("lock-test:ring:%d", i)
		m := newMutexOn(t, ring, lock.Config{Key: key, TTL: time.Minute})
		l, err := m.TryLock(ctx)
		if err != nil {
			failed++
			t.Logf("TryLock %q: %v (ErrOutcomeUnknown: %v); key on the ring now: %q", key, err, errors.Is(err, lock.ErrOutcomeUnknown), ring.Get(ctx, key).Val())
			continue
		}
		require.NoError(t, l.Unlock(ctx))
	}
	require.Zero(t, failed, "TryLock failed on %d of 8 keys of a free lock on a Ring", failed)
}
