package adaptive_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// replicaLimit is a Config on servers of the test's own, with Replicas.
func replicaLimit(t *testing.T, timeout time.Duration) adaptive.Config {
	return adaptive.Config{Key: "adaptive-test:" + t.Name(), Min: 1, Max: 10, Initial: 2, TTL: time.Minute,
		Window: time.Minute, Replicas: 1, ReplicaTimeout: timeout}
}

// holdsOn returns the holders of the limit at key, as the server client
// talks to has them, live or not.
func holdsOn(t *testing.T, client *redis.Client, key string) map[string]time.Duration {
	t.Helper()
	keys, _ := adaptive.Keys(key)
	ctx := context.Background()
	now, err := client.Time(ctx).Result()
	require.NoError(t, err)
	z, err := client.ZRangeWithScores(ctx, keys[1], 0, -1).Result()
	require.NoError(t, err)
	held := map[string]time.Duration{}
	for _, m := range z {
		held[m.Member.(string)] = time.UnixMilli(int64(m.Score)).Sub(now)
	}
	return held
}

// Replicas and ReplicaTimeout are checked as the root limiter's are, and
// WAIT's timeout is kept to the millisecond: a timeout that would round
// to 0, which WAIT takes as "for ever", is refused.
func TestReplicasConfig(t *testing.T) {
	ok := adaptive.Config{Key: "k", Max: 10}
	for _, bad := range []struct {
		field  string
		change func(c *adaptive.Config)
	}{
		{"Replicas", func(c *adaptive.Config) { c.Replicas = -1 }},
		{"ReplicaTimeout", func(c *adaptive.Config) { c.ReplicaTimeout = -time.Millisecond }},
		{"ReplicaTimeout", func(c *adaptive.Config) { c.Replicas, c.ReplicaTimeout = 1, 500*time.Microsecond }},
	} {
		cfg := ok
		bad.change(&cfg)
		_, err := adaptive.New(redis.NewClient(&redis.Options{}), cfg)
		assert.ErrorIs(t, err, adaptive.ErrInvalidConfig, bad.field)
		assert.ErrorContains(t, err, bad.field)
	}
	cfg := ok
	cfg.Replicas = 2
	l := newLimiterOn(t, redis.NewClient(&redis.Options{}), cfg)
	assert.Equal(t, time.Second, l.Config().ReplicaTimeout, "0 means one second")
	assert.Zero(t, newLimiterOn(t, redis.NewClient(&redis.Options{}), ok).Config().ReplicaTimeout, "no Replicas, no timeout")
}

// With Config.Replicas and the replica up, every write is acknowledged by
// the replica before the call returns: right after TryAcquire and
// Acquire, the replica holds the slot, for its TTL; right after Success,
// Dropped or Ignore, it does not.
func TestReplicasAcknowledgeEveryWrite(t *testing.T) {
	r := redistest.StartReplicated(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg := replicaLimit(t, 5*time.Second)
	l := newLimiterOn(t, r.Client, cfg)
	free := []func(*adaptive.Slot, context.Context) error{(*adaptive.Slot).Success, (*adaptive.Slot).Dropped, (*adaptive.Slot).Ignore}
	for i, acquire := range []func(context.Context) (*adaptive.Slot, error){l.TryAcquire, l.Acquire, l.TryAcquire} {
		s, err := acquire(ctx)
		require.NoError(t, err, "call %d", i)
		lease, ok := holdsOn(t, r.ReplicaClient, cfg.Key)[s.ID()]
		assert.True(t, ok, "call %d: the replica has the slot", i)
		assert.Greater(t, lease, 50*time.Second, "call %d: with its lease", i)
		require.NoError(t, free[i](s, ctx), "call %d", i)
		assert.NotContains(t, holdsOn(t, r.ReplicaClient, cfg.Key), s.ID(), "call %d: the replica has the release", i)
	}
}

// With Config.Replicas, a waiter handed a slot by a release claims it for
// its full TTL, and the replica acknowledges the claim, before Acquire
// returns: right after it returns, the slot's lease on the replica is the
// full TTL, not the 3-second claim time of a slot handed but not claimed.
func TestHandedSlotIsClaimedOnReplicaBeforeAcquireReturns(t *testing.T) {
	r := redistest.StartReplicated(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg := replicaLimit(t, 5*time.Second)
	cfg.Max, cfg.Initial = 1, 1
	l := newLimiterOn(t, r.Client, cfg)
	held, err := l.TryAcquire(ctx)
	require.NoError(t, err)

	type result struct {
		s   *adaptive.Slot
		err error
	}
	got := make(chan result, 1)
	go func() {
		s, err := l.Acquire(ctx)
		got <- result{s, err}
	}()
	eventually(t, 5*time.Second, func() bool {
		info, err := l.Inspect(ctx)
		return err == nil && info.Waiters == 1
	}, "the waiter never queued")
	require.NoError(t, held.Ignore(ctx))
	res := <-got
	require.NoError(t, res.err)
	lease, ok := holdsOn(t, r.ReplicaClient, cfg.Key)[res.s.ID()]
	assert.True(t, ok, "the replica has the waiter's slot")
	assert.Greater(t, lease, 50*time.Second, "the replica has the claim, for the full TTL")
	require.NoError(t, res.s.Success(ctx))
	assert.Empty(t, holdsOn(t, r.ReplicaClient, cfg.Key), "no slot is left on the replica")
}

// With Config.Replicas and the replica cut off or killed, a slot the
// replica does not acknowledge counts as not taken: TryAcquire and
// Acquire return ErrNotReplicated within about ReplicaTimeout, and free
// what they took on the master before they return, leaving no waiter in
// the queue either. A release the replica does not acknowledge returns
// ErrNotReplicated too, having freed the slot on the master.
func TestReplicaLostSlotIsNotTaken(t *testing.T) {
	for _, lose := range []struct {
		name string
		do   func(t *testing.T, r *redistest.Replicated)
	}{
		{"cut-off", func(t *testing.T, r *redistest.Replicated) { r.CutOff(t) }},
		{"killed", func(t *testing.T, r *redistest.Replicated) { r.Replica.Kill() }},
	} {
		t.Run(lose.name, func(t *testing.T) {
			r := redistest.StartReplicated(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			const timeout = 500 * time.Millisecond
			cfg := replicaLimit(t, timeout)
			l := newLimiterOn(t, r.Client, cfg)
			// The server caches every script the calls below run. A busy
			// machine can hold the replica back longer than timeout, so the
			// warm-up waits for it longer.
			warm := newLimiterOn(t, r.Client, replicaLimit(t, 10*time.Second))
			s, err := warm.Acquire(ctx)
			require.NoError(t, err)
			require.NoError(t, s.Ignore(ctx))
			// A slot of l, for its release below, taken while the replica
			// acknowledges writes.
			var before *adaptive.Slot
			eventually(t, 10*time.Second, func() bool {
				before, err = l.TryAcquire(ctx)
				return err == nil
			}, "no slot was acknowledged")
			lose.do(t, r)

			for _, c := range []struct {
				name string
				take func(context.Context) (*adaptive.Slot, error)
			}{{"TryAcquire", l.TryAcquire}, {"Acquire", l.Acquire}} {
				start := time.Now()
				s, err := c.take(ctx)
				took := time.Since(start)
				assert.ErrorIs(t, err, adaptive.ErrNotReplicated, c.name)
				assert.Nil(t, s, c.name)
				t.Logf("%s returned in %v (ReplicaTimeout %v): %v", c.name, took, timeout, err)
				// A WAIT's timeout fires on the server's next tick, 100ms at most later.
				assert.Less(t, took, timeout+300*time.Millisecond, "%s returned within about ReplicaTimeout", c.name)
				held := holdsOn(t, r.Client, cfg.Key)
				assert.Len(t, held, 1, "%s freed what it took on the master", c.name)
				assert.Contains(t, held, before.ID(), c.name)
				info, err := l.Inspect(ctx)
				require.NoError(t, err)
				assert.Zero(t, info.Waiters, "%s left no waiter in the queue", c.name)
			}

			err = before.Success(ctx)
			assert.ErrorIs(t, err, adaptive.ErrNotReplicated, "Success")
			assert.Empty(t, holdsOn(t, r.Client, cfg.Key), "the slot is freed on the master")
		})
	}
}

// Failover to a replica that lost its link to the master just before some
// slots were taken. With Config.Replicas, a slot is taken only once the
// replica has it, so no slot a caller was told it holds is lost when the
// replica is promoted. Without it, the slots the replica never received
// are lost.
func TestFailoverKeepsAcknowledgedSlots(t *testing.T) {
	for _, replicas := range []int{1, 0} {
		t.Run(fmt.Sprintf("replicas=%d", replicas), func(t *testing.T) {
			r := redistest.StartReplicated(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cfg := replicaLimit(t, 200*time.Millisecond)
			cfg.Max, cfg.Initial, cfg.Replicas = 10, 10, replicas
			l := newLimiterOn(t, r.Client, cfg)
			patient := cfg
			patient.ReplicaTimeout = 5 * time.Second // the replica is there: wait for it
			first, err := newLimiterOn(t, r.Client, patient).TryAcquire(ctx)
			require.NoError(t, err)
			eventually(t, 5*time.Second, func() bool { return len(holdsOn(t, r.ReplicaClient, cfg.Key)) == 1 },
				"the replica never had the first slot")

			r.CutOff(t)
			told := []string{first.ID()}
			notAcked := 0
			for range 5 {
				s, err := l.TryAcquire(ctx)
				switch {
				case err == nil:
					told = append(told, s.ID())
				case assert.ErrorIs(t, err, adaptive.ErrNotReplicated):
					notAcked++
				}
			}
			r.Master.Kill()
			require.NoError(t, r.ReplicaClient.ReplicaOf(ctx, "NO", "ONE").Err())

			held := holdsOn(t, r.ReplicaClient, cfg.Key)
			lost := 0
			for _, id := range told {
				if _, ok := held[id]; !ok {
					lost++
				}
			}
			t.Logf("replicas=%d: %d slots acknowledged to callers, %d refused as not replicated, %d of them lost in the failover",
				replicas, len(told), notAcked, lost)
			if replicas > 0 {
				assert.Equal(t, 5, notAcked, "no slot was acknowledged while the replica was cut off")
				assert.Zero(t, lost, "no acknowledged slot was lost")
			} else {
				assert.Equal(t, 5, lost, "the slots the replica never got are lost")
			}
		})
	}
}

// The same on a server that has not run the limit's scripts yet, such as
// a replica just promoted, with the default ReplicaTimeout: the release
// that follows the refused write still frees the slot, and the queue,
// before TryAcquire or Acquire returns.
func TestReplicaLostOnFreshServerSlotIsNotLeft(t *testing.T) {
	r := redistest.StartReplicated(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r.CutOff(t)
	cfg := replicaLimit(t, 0)
	l := newLimiterOn(t, r.Client, cfg)
	for _, c := range []struct {
		name string
		take func(context.Context) (*adaptive.Slot, error)
	}{{"TryAcquire", l.TryAcquire}, {"Acquire", l.Acquire}} {
		require.NoError(t, r.Client.ScriptFlush(ctx).Err())
		start := time.Now()
		s, err := c.take(ctx)
		t.Logf("%s returned in %v (ReplicaTimeout %v): %v", c.name, time.Since(start), l.Config().ReplicaTimeout, err)
		assert.ErrorIs(t, err, adaptive.ErrNotReplicated, c.name)
		assert.Nil(t, s, c.name)
		assert.Empty(t, holdsOn(t, r.Client, cfg.Key), "%s freed what it took on the master", c.name)
		info, err := l.Inspect(ctx)
		require.NoError(t, err)
		assert.Zero(t, info.Waiters, "%s left no waiter in the queue", c.name)
	}
}
