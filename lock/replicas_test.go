package lock_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// replicaKey returns a key of t's own for a lock on servers of t's own.
func replicaKey(t *testing.T) string {
	return "lock-test:" + t.Name()
}

// With Config.Replicas and the replica up, every write is acknowledged by
// the replica before the call returns: right after TryLock and Lock, the
// replica holds the owner's token; right after Unlock, the key is gone
// there too.
func TestReplicasAcknowledgeEveryWrite(t *testing.T) {
	r := redistest.StartReplicated(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	key := replicaKey(t)
	m := newMutexOn(t, r.Client, lock.Config{Key: key, TTL: time.Minute, Replicas: 1, ReplicaTimeout: 5 * time.Second})

	l, err := m.TryLock(ctx)
	require.NoError(t, err)
	assert.Equal(t, l.Token(), r.ReplicaClient.Get(ctx, key).Val(), "the replica has the lock")
	assert.Greater(t, r.ReplicaClient.PTTL(ctx, key).Val(), 50*time.Second, "with its lease")

	require.NoError(t, l.Refresh(ctx))
	require.NoError(t, l.Unlock(ctx))
	assert.Zero(t, r.ReplicaClient.Exists(ctx, key).Val(), "the replica has the unlock")

	l, err = m.Lock(ctx)
	require.NoError(t, err)
	assert.Equal(t, l.Token(), r.ReplicaClient.Get(ctx, key).Val(), "the replica has the lock")
	require.NoError(t, l.Refresh(ctx))
	require.NoError(t, l.Unlock(ctx))
	assert.Zero(t, r.ReplicaClient.Exists(ctx, key).Val(), "the replica has the unlock")
}

// loseReplica names the ways a test loses the replica.
var loseReplica = []struct {
	name string
	do   func(t *testing.T, r *redistest.Replicated)
}{
	{"cut-off", func(t *testing.T, r *redistest.Replicated) { r.CutOff(t) }},
	{"killed", func(t *testing.T, r *redistest.Replicated) { r.Replica.Kill() }},
}

// takers are the calls that take a lock.
func takers(m *lock.Mutex) []struct {
	name string
	take func(context.Context) (*lock.Lock, error)
} {
	return []struct {
		name string
		take func(context.Context) (*lock.Lock, error)
	}{{"TryLock", m.TryLock}, {"Lock", m.Lock}}
}

// With Config.Replicas and the replica cut off or killed, a lock the
// replica does not acknowledge counts as not taken: TryLock and Lock
// return ErrNotReplicated within about ReplicaTimeout, and unlock what
// they took on the master before they return.
func TestReplicaLostLockIsNotTaken(t *testing.T) {
	for _, lose := range loseReplica {
		t.Run(lose.name, func(t *testing.T) {
			r := redistest.StartReplicated(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			key := replicaKey(t)
			const timeout = 500 * time.Millisecond
			m := newMutexOn(t, r.Client, lock.Config{Key: key, TTL: time.Minute, Replicas: 1, ReplicaTimeout: timeout})
			// The server caches every script the calls below run. A busy
			// machine can hold the replica back longer than timeout, so the
			// warm-up waits for it longer.
			warm := newMutexOn(t, r.Client, lock.Config{Key: key, TTL: time.Minute, Replicas: 1, ReplicaTimeout: 10 * time.Second})
			for _, c := range takers(warm) {
				l, err := c.take(ctx)
				require.NoError(t, err, c.name)
				require.NoError(t, l.Unlock(ctx), c.name)
			}
			lose.do(t, r)

			for _, c := range takers(m) {
				start := time.Now()
				l, err := c.take(ctx)
				took := time.Since(start)
				assert.ErrorIs(t, err, lock.ErrNotReplicated, c.name)
				assert.Nil(t, l, c.name)
				t.Logf("%s returned in %v (ReplicaTimeout %v): %v", c.name, took, timeout, err)
				// A WAIT's timeout fires on the server's next tick, 100ms at most later.
				assert.Less(t, took, timeout+300*time.Millisecond, "%s returned within about ReplicaTimeout", c.name)
				assert.Zero(t, r.Client.Exists(ctx, key, lock.SideKey(key, "q")).Val(), "%s unlocked what it took on the master", c.name)
			}
		})
	}
}

// The same on a server that has not run the lock's scripts yet, such as
// a replica just promoted, with the default ReplicaTimeout: the unlock
// that follows the refused write still frees the lock before TryLock or
// Lock returns.
func TestReplicaLostOnFreshServerLockIsNotLeft(t *testing.T) {
	r := redistest.StartReplicated(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r.CutOff(t)
	for _, name := range []string{"TryLock", "Lock"} {
		require.NoError(t, r.Client.ScriptFlush(ctx).Err())
		key := replicaKey(t) + ":" + name
		m := newMutexOn(t, r.Client, lock.Config{Key: key, TTL: time.Minute, Replicas: 1})
		take := m.TryLock
		if name == "Lock" {
			take = m.Lock
		}
		start := time.Now()
		l, err := take(ctx)
		t.Logf("%s returned in %v (ReplicaTimeout %v): %v", name, time.Since(start), m.Config().ReplicaTimeout, err)
		assert.ErrorIs(t, err, lock.ErrNotReplicated, name)
		assert.Nil(t, l, name)
		assert.Zero(t, r.Client.Exists(ctx, key, lock.SideKey(key, "q")).Val(), "%s unlocked what it took on the master", name)
	}
}

// countPipelinedEvals counts the scripts a client runs in pipelines, as
// every script runs with Config.Replicas; a call refused with NOSCRIPT,
// sent again with EVAL, does not count.
type countPipelinedEvals struct{ n atomic.Int64 }

func (c *countPipelinedEvals) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *countPipelinedEvals) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (c *countPipelinedEvals) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if name := cmd.Name(); (name == "evalsha" || name == "eval") && !redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
				c.n.Add(1)
			}
		}
		return err
	}
}

// With Config.Replicas, a waiter handed the lock by Unlock claims it for
// its full TTL, and the replica acknowledges the claim, before Lock
// returns: right after it returns, the lock's PTTL on the replica is the
// full TTL, not the 3-second claim time of a lock handed but not claimed.
func TestHandedLockIsClaimedOnReplicaBeforeLockReturns(t *testing.T) {
	r := redistest.StartReplicated(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	key := replicaKey(t)
	cfg := lock.Config{Key: key, TTL: time.Minute, Replicas: 1, ReplicaTimeout: 5 * time.Second}
	owner, err := newMutexOn(t, r.Client, cfg).TryLock(ctx)
	require.NoError(t, err)

	client := redis.NewClient(r.Client.Options())
	t.Cleanup(func() { client.Close() })
	tries := &countPipelinedEvals{}
	client.AddHook(tries)
	waiting := newMutexOn(t, client, cfg)
	type result struct {
		l   *lock.Lock
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := waiting.Lock(ctx)
		got <- result{l, err}
	}()
	queue := lock.SideKey(key, "q")
	require.Eventually(t, func() bool { return r.Client.ZCard(ctx, queue).Val() == 1 }, 5*time.Second, time.Millisecond)
	// Wait until the waiter's subscription is confirmed and its tries
	// settle, so that the unlock's notice, not a try, wakes it.
	before := tries.n.Load()
	for settled := false; !settled; {
		time.Sleep(150 * time.Millisecond)
		now := tries.n.Load()
		settled, before = now == before, now
	}

	require.NoError(t, owner.Unlock(ctx))
	var res result
	select {
	case res = <-got:
	case <-time.After(900 * time.Millisecond): // a waiter's own retry comes after a second
		t.Fatal("the waiter was not woken by the unlock")
	}
	require.NoError(t, res.err)
	pttl := r.ReplicaClient.PTTL(ctx, key).Val()
	assert.Equal(t, res.l.Token(), r.ReplicaClient.Get(ctx, key).Val(), "the replica has the waiter's lock")
	assert.Greater(t, pttl, 55*time.Second, "the replica has the claim, for the full TTL")
	assert.Greater(t, res.l.Fence(), owner.Fence())
	require.NoError(t, res.l.Unlock(ctx))
	assert.Zero(t, r.ReplicaClient.Exists(ctx, key, queue).Val(), "no key is left on the replica")
}
