package slotlimit_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// SCRIPT FLUSH while 100 goroutines acquire and release: go-redis loads
// each script again on NOSCRIPT, and no caller sees an error.
func TestScriptFlushUnderLoad(t *testing.T) {
	for _, start := range []func(*testing.T) *backend{newRealRedis, newRedisCluster} {
		b := start(t)
		ctx := context.Background()
		l := newLimiter(t, b, testKey(t, b), 60, time.Minute)
		var errs, ops atomic.Int64
		var wg sync.WaitGroup
		stop := time.Now().Add(1500 * time.Millisecond)
		for w := 0; w < 100; w++ {
			wg.Add(1)
			go func(holder string) {
				defer wg.Done()
				for i := 0; i < 5000 && time.Now().Before(stop); i++ {
					res, err := l.TryAcquire(ctx, holder)
					if err == nil && res.Acquired {
						err = l.Release(ctx, holder)
					}
					if err != nil {
						errs.Add(1)
						t.Log(err)
					}
					ops.Add(1)
				}
			}(fmt.Sprintf("w%d", w))
		}
		for i := 0; i < 5; i++ {
			time.Sleep(250 * time.Millisecond)
			require.NoError(t, b.Client.ScriptFlush(ctx).Err())
		}
		wg.Wait()
		assert.Zero(t, errs.Load(), "errors among %d calls", ops.Load())
		assert.Positive(t, ops.Load())
	}
}

// A Redis that restarts under load: callers get errors promptly while it
// is down, succeed within a second once it is back, and the limit holds.
// Without persistence the leases are gone after the restart.
func TestRestartUnderLoad(t *testing.T) {
	s := redistest.StartServer(t)
	const limit = 10
	client := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialerRetries: 1,
		DialTimeout: 100 * time.Millisecond, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	key := "slotlimit-test:restart"
	l := newLimiterOn(t, client, slotlimit.Config{Key: key, Limit: limit, TTL: time.Minute})

	var (
		g                      gauge
		slow, failed, acquired atomic.Int64
		down                   atomic.Bool
		wg                     sync.WaitGroup
	)
	stop := time.Now().Add(3 * time.Second)
	for w := 0; w < 30; w++ {
		wg.Add(1)
		go func(holder string) {
			defer wg.Done()
			for i := 0; i < 100000 && time.Now().Before(stop); i++ {
				const deadline = 200 * time.Millisecond
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				start := time.Now()
				res, err := l.TryAcquire(ctx, holder)
				cancel()
				if time.Since(start) > deadline+300*time.Millisecond {
					slow.Add(1)
				}
				if err != nil {
					failed.Add(1)
					time.Sleep(10 * time.Millisecond)
					continue
				}
				if !res.Acquired {
					time.Sleep(time.Millisecond)
					continue
				}
				acquired.Add(1)
				g.enter()
				time.Sleep(time.Millisecond)
				g.leave()
				ctx, cancel = context.WithTimeout(context.Background(), deadline)
				l.Release(ctx, holder) // may fail while down; the lease then lapses
				cancel()
			}
		}(fmt.Sprintf("w%d", w))
	}
	time.Sleep(700 * time.Millisecond)
	s.Kill()
	down.Store(true)
	time.Sleep(700 * time.Millisecond)
	failedWhileDown := failed.Load()
	require.NoError(t, s.Restart())
	back := time.Now()
	before := acquired.Load()
	for acquired.Load() == before && time.Since(back) < 3*time.Second {
		time.Sleep(5 * time.Millisecond)
	}
	recovery := time.Since(back)
	wg.Wait()

	assert.Positive(t, failedWhileDown, "calls failed while Redis was down")
	assert.Zero(t, slow.Load(), "calls that overran their deadline")
	assert.Less(t, recovery, time.Second, "calls succeed within a second of the restart")
	assert.LessOrEqual(t, g.peak.Load(), int64(limit))
}

// With appendonly and fsync on every write, leases survive a kill -9 and
// restart; without persistence they are gone.
func TestLeasesAcrossRestart(t *testing.T) {
	for _, persist := range []bool{true, false} {
		t.Run(fmt.Sprintf("appendonly=%v", persist), func(t *testing.T) {
			var args []string
			if persist {
				args = []string{"--appendonly", "yes", "--appendfsync", "always"}
			}
			s := redistest.StartServer(t, args...)
			client := redis.NewClient(&redis.Options{Addr: s.Addr})
			t.Cleanup(func() { client.Close() })
			ctx := context.Background()
			l := newLimiterOn(t, client, slotlimit.Config{Key: "slotlimit-test:persist", Limit: 5, TTL: time.Minute})
			for _, h := range []string{"d1", "d2", "d3"} {
				_, err := l.TryAcquire(ctx, h)
				require.NoError(t, err)
			}
			s.Kill()
			require.NoError(t, s.Restart())
			hs := []string{}
			require.Eventually(t, func() bool {
				got, err := l.Holders(ctx)
				if err != nil {
					return false
				}
				hs = hs[:0]
				for _, h := range got {
					hs = append(hs, h.ID)
				}
				return true
			}, 5*time.Second, 20*time.Millisecond)
			if persist {
				assert.ElementsMatch(t, []string{"d1", "d2", "d3"}, hs, "the leases survived")
			} else {
				assert.Empty(t, hs, "without persistence the leases are gone")
			}
		})
	}
}

// Failover to a replica that lost its link to the master just before some
// leases were taken. With Config.Replicas, a lease is taken only once the
// replica has it, so no lease a caller was told it holds is lost when the
// replica is promoted. Without it, the leases the replica never received
// are lost.
func TestFailoverKeepsAcknowledgedLeases(t *testing.T) {
	for _, replicas := range []int{1, 0} {
		t.Run(fmt.Sprintf("replicas=%d", replicas), func(t *testing.T) {
			r := redistest.StartReplicated(t)
			ctx := context.Background()
			master, replicaClient, client := r.Master, r.ReplicaClient, r.Client
			cfg := slotlimit.Config{Key: "slotlimit-test:failover", Limit: 10, TTL: time.Minute,
				Replicas: replicas, ReplicaTimeout: 200 * time.Millisecond}
			l := newLimiterOn(t, client, cfg)
			patient := cfg
			patient.ReplicaTimeout = 5 * time.Second // the replica is there: wait for it
			res, err := newLimiterOn(t, client, patient).TryAcquire(ctx, "before")
			require.NoError(t, err)
			require.True(t, res.Acquired)
			require.Eventually(t, func() bool {
				n, _ := replicaClient.ZCard(ctx, cfg.Key).Result()
				return n == 1
			}, 5*time.Second, 10*time.Millisecond)

			// The replica loses its link: it follows a master that is not there.
			r.CutOff(t)
			told := []string{"before"}
			notAcked := 0
			for i := 0; i < 5; i++ {
				holder := fmt.Sprintf("during-%d", i)
				res, err := l.TryAcquire(ctx, holder)
				switch {
				case err == nil && res.Acquired:
					told = append(told, holder)
				case assert.ErrorIs(t, err, slotlimit.ErrNotReplicated):
					notAcked++
				}
			}
			master.Kill()
			require.NoError(t, replicaClient.ReplicaOf(ctx, "NO", "ONE").Err())

			promoted := newLimiterOn(t, replicaClient, slotlimit.Config{Key: cfg.Key, Limit: 10, TTL: time.Minute})
			held := map[string]bool{}
			for _, h := range mustHolders(t, promoted) {
				held[h.ID] = true
			}
			lost := 0
			for _, h := range told {
				if !held[h] {
					lost++
				}
			}
			t.Logf("replicas=%d: %d leases acknowledged to callers, %d refused as not replicated, %d of them lost in the failover",
				replicas, len(told), notAcked, lost)
			if replicas > 0 {
				assert.Equal(t, 5, notAcked, "no acquire was acknowledged while the replica was cut off")
				assert.Zero(t, lost, "no acknowledged lease was lost")
			} else {
				assert.Equal(t, 5, lost, "the leases the replica never got are lost")
			}
		})
	}
}

func mustHolders(t *testing.T, l *slotlimit.Limiter) []slotlimit.Holder {
	t.Helper()
	hs, err := l.Holders(context.Background())
	require.NoError(t, err)
	return hs
}

// With Replicas on a cluster, writes go to the key's master with WAIT, and
// a flushed script cache is reloaded by hand (a pipeline has no NOSCRIPT
// fallback).
func TestReplicasOnCluster(t *testing.T) {
	b := newRedisCluster(t)
	ctx := context.Background()
	l := newLimiterOn(t, b.Client, slotlimit.Config{Key: testKey(t, b), Limit: 2, TTL: time.Minute, Replicas: 1})
	res, err := l.TryAcquireN(ctx, "d1", 2)
	require.NoError(t, err)
	assert.True(t, res.Acquired)
	require.NoError(t, b.Client.ScriptFlush(ctx).Err())
	err = l.Renew(ctx, "d1")
	require.NoError(t, err)
	err = l.Release(ctx, "d1")
	require.NoError(t, err)

	c, err := slotlimit.NewCounter(b.Client, slotlimit.Config{Key: testKey(t, b), Limit: 1, Replicas: 1})
	require.NoError(t, err)
	res, err = c.TryAcquire(ctx)
	require.NoError(t, err)
	assert.True(t, res.Acquired)
}

// A server that stops answering (CLIENT PAUSE): with ContextTimeoutEnabled
// a call returns at its ctx deadline, and Acquire, whose try's outcome is
// then unknown, releases the holder once the server answers again, so no
// phantom slot is left.
func TestPausedServerHonoursDeadlines(t *testing.T) {
	s := redistest.StartServer(t)
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { admin.Close() })
	client := redis.NewClient(&redis.Options{Addr: s.Addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { client.Close() })
	key := "slotlimit-test:paused"
	l := newLimiterOn(t, client, slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute})
	watch := newLimiterOn(t, admin, slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute})

	const deadline = 200 * time.Millisecond
	require.NoError(t, admin.Do(ctx, "client", "pause", 600, "write").Err())
	short, cancel := context.WithTimeout(ctx, deadline)
	start := time.Now()
	_, err := l.TryAcquire(short, "d1")
	cancel()
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), deadline+300*time.Millisecond, "TryAcquire returned at its deadline")

	time.Sleep(700 * time.Millisecond) // the pause ends; the try above ran then
	err = l.Release(ctx, "d1")         // the caller of TryAcquire cleans up
	if !errors.Is(err, slotlimit.ErrNotHeld) {
		require.NoError(t, err)
	}

	require.NoError(t, admin.Do(ctx, "client", "pause", 500, "write").Err())
	short, cancel = context.WithTimeout(ctx, deadline)
	start = time.Now()
	_, err = l.Acquire(short, "d2")
	cancel()
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	// Acquire waits for its cleanup release, bounded by a second past ctx.
	assert.Less(t, time.Since(start), deadline+time.Second+300*time.Millisecond)
	require.Eventually(t, func() bool { return len(mustHolders(t, watch)) == 0 },
		2*time.Second, 20*time.Millisecond, "no phantom slot once the server answers")
}

// Many keys spread over every shard of a cluster: no command fails with
// CROSSSLOT, and each key keeps its own count.
func TestClusterManyKeys(t *testing.T) {
	b := newRedisCluster(t)
	ctx := context.Background()
	base := testKey(t, b)
	shards := map[string]bool{}
	for i := 0; i < 300; i++ {
		key := fmt.Sprintf("%s:area-%d", base, i)
		l := newLimiter(t, b, key, 2, time.Minute)
		res, err := l.TryAcquireN(ctx, "d", 2)
		require.NoError(t, err, key)
		require.True(t, res.Acquired)
		n, err := l.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		err = l.Release(ctx, "d")
		require.NoError(t, err)
		master, err := b.Client.(*redis.ClusterClient).MasterForKey(ctx, key)
		require.NoError(t, err)
		shards[master.Options().Addr] = true
	}
	assert.Len(t, shards, 3, "the keys spread over every master")
}

// With Config.Replicas every write is a pipeline that ends with WAIT. It
// goes through however often the script cache is flushed, and no call
// runs twice.
func TestReplicatedWritesSurviveScriptFlushBeforeEveryPipeline(t *testing.T) {
	client := redistest.StartReplicated(t).Client
	ctx := context.Background()
	// The flush goes on a client of its own: the hooked one runs a
	// pipeline to set up each new connection.
	flusher := redis.NewClient(client.Options())
	t.Cleanup(func() { flusher.Close() })
	client.AddHook(flushBeforePipelines(func(ctx context.Context) error {
		return flusher.ScriptFlush(ctx).Err()
	}))
	l := newLimiterOn(t, client, slotlimit.Config{Key: "slotlimit-test:replicated-flush", Limit: 3, TTL: time.Minute,
		Replicas: 1, ReplicaTimeout: 5 * time.Second})
	for i := range 10 {
		holder := fmt.Sprintf("d%d", i)
		res, err := l.TryAcquire(ctx, holder)
		require.NoError(t, err, "acquire %d", i)
		assert.True(t, res.Acquired)
		assert.Equal(t, int64(1), res.Count, "acquire %d ran once", i)
		err = l.Renew(ctx, holder)
		require.NoError(t, err, "renew %d", i)
		err = l.Release(ctx, holder)
		require.NoError(t, err, "release %d", i)
	}
}
