package slotlimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// Every write takes effect once however often it is sent. These tests send
// each write through a client with go-redis's default retries whose reply
// is lost once after the server ran the command, so that go-redis sends it
// again: the command runs twice while the caller sees one call.

// eachRealBackend runs test on a real Redis and a real Redis Cluster, the
// backends whose connections can lose a reply.
func eachRealBackend(t *testing.T, test func(t *testing.T, b *backend)) {
	for _, b := range []func(*testing.T) *backend{newRealRedis, newRedisCluster} {
		backend := b(t)
		t.Run(backend.Name, func(t *testing.T) { test(t, backend) })
	}
}

// cutLimiter returns a Limiter on a client whose replies cutter can cut,
// and a Limiter on the same key through b's own client, to look and to
// act as other processes would.
func cutLimiter(t *testing.T, b *backend, cfg slotlimit.Config) (*slotlimit.Limiter, *redistest.ReplyCutter, *slotlimit.Limiter) {
	t.Helper()
	client, cutter := b.CutClient(t)
	l, err := slotlimit.New(client, cfg)
	require.NoError(t, err)
	other, err := slotlimit.New(b.Client, cfg)
	require.NoError(t, err)
	warmUp(t, other)
	return l, cutter, other
}

// cutOnce arms cutter to lose the reply of the next script call on key,
// once.
func cutOnce(cutter *redistest.ReplyCutter, key string) {
	cutter.Arm(1, "evalsha", key)
}

func requireCut(t *testing.T, cutter *redistest.ReplyCutter, cuts int) {
	t.Helper()
	require.Equal(t, cuts, cutter.Cuts(), "the reply was lost and the call sent again")
	require.False(t, cutter.Armed())
}

// warmUp loads the limiter's scripts on the server of its key, so that
// the reply a test cuts is the script's, not a NOSCRIPT that makes the
// client send the script again anyway.
func warmUp(t *testing.T, l *slotlimit.Limiter) {
	t.Helper()
	ctx := context.Background()
	_, err := l.TryAcquireBatch(ctx, []string{"warm-up"})
	require.NoError(t, err)
	err = l.Renew(ctx, "warm-up")
	require.NoError(t, err)
	_, err = l.ReleaseBatch(ctx, []string{"warm-up"})
	require.NoError(t, err)
	lease, err := l.AcquireLease(ctx, 1)
	require.NoError(t, err)
	err = lease.Release(ctx)
	require.NoError(t, err)
}

func weights(t *testing.T, l *slotlimit.Limiter) map[string]int64 {
	t.Helper()
	hs, err := l.Holders(context.Background())
	require.NoError(t, err)
	w := map[string]int64{}
	for _, h := range hs {
		w[h.ID] = h.Weight
	}
	return w
}

// A re-sent TryAcquire finds its own lease and answers as its first run
// did: granted, with the count of one lease, for the last slot too, and a
// re-weigh counts its units once.
func TestResentTryAcquireTakesOneSlot(t *testing.T) {
	eachRealBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		l, cutter, other := cutLimiter(t, b, slotlimit.Config{Key: key, Limit: 3, TTL: time.Minute})

		cutOnce(cutter, key)
		res, err := l.TryAcquire(ctx, "a")
		require.NoError(t, err)
		requireCut(t, cutter, 1)
		assert.True(t, res.Acquired)
		assert.Equal(t, int64(1), res.Count)
		assert.Equal(t, int64(1), res.Weight)

		// Re-weigh a to 2 units: the last free units, counted once.
		cutOnce(cutter, key)
		res, err = l.TryAcquireN(ctx, "a", 3)
		require.NoError(t, err)
		requireCut(t, cutter, 2)
		assert.True(t, res.Acquired)
		assert.Equal(t, int64(3), res.Count)
		assert.Equal(t, int64(3), res.Weight)
		assert.Equal(t, map[string]int64{"a": 3}, weights(t, other))

		// The last slot at a key with unweighted leases: the full marker the
		// first run set does not refuse the second.
		key2 := testKey(t, b)
		l2, cutter2, other2 := cutLimiter(t, b, slotlimit.Config{Key: key2, Limit: 2, TTL: time.Minute})
		_, err = other2.TryAcquire(ctx, "x")
		require.NoError(t, err)
		cutOnce(cutter2, key2)
		res, err = l2.TryAcquire(ctx, "last")
		require.NoError(t, err)
		requireCut(t, cutter2, 1)
		assert.True(t, res.Acquired, "the second run finds the lease its first run took")
		assert.Equal(t, int64(2), res.Count)
		n, err := other2.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), n)
	})
}

// A re-sent TryAcquire that was refused is refused again; with
// CountRefusals, each run is counted, as Config.CountRefusals says.
func TestResentRefusalIsCountedPerRun(t *testing.T) {
	eachRealBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		t.Cleanup(func() { b.Client.Del(context.Background(), "{"+key+"}/refused") })
		cfg := slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute, CountRefusals: true}
		l, cutter, other := cutLimiter(t, b, cfg)
		_, err := other.TryAcquire(ctx, "x")
		require.NoError(t, err)
		cutOnce(cutter, key)
		res, err := l.TryAcquire(ctx, "late")
		require.NoError(t, err)
		requireCut(t, cutter, 1)
		assert.False(t, res.Acquired)
		assert.Equal(t, []string{"x"}, holderIDs(t, other))
		n, err := other.Refusals(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), n, "a refusal sent twice is counted twice")
	})
}

// A re-sent TryAcquireBatch and ReleaseBatch take and free each holder's
// slot once; the re-sent release reports, as its doc says, that it held
// nothing.
func TestResentBatchesTakeAndFreeOnce(t *testing.T) {
	eachRealBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		l, cutter, other := cutLimiter(t, b, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute})
		// A pipeline on a Cluster's node is not sent again: the batch
		// fails, its outcome unknown, and the caller sends it again, as
		// its doc says is safe.
		cutOnce(cutter, key)
		results, err := l.TryAcquireBatch(ctx, []string{"a", "b", "c"})
		if err != nil {
			results, err = l.TryAcquireBatch(ctx, []string{"a", "b", "c"})
		}
		require.NoError(t, err)
		requireCut(t, cutter, 1)
		require.Len(t, results, 3)
		assert.True(t, results[0].Acquired)
		assert.True(t, results[1].Acquired)
		assert.False(t, results[2].Acquired, "the limit holds")
		assert.Equal(t, map[string]int64{"a": 1, "b": 1}, weights(t, other))

		cutOnce(cutter, key)
		released, err := l.ReleaseBatch(ctx, []string{"a", "c"})
		if err != nil {
			released, err = l.ReleaseBatch(ctx, []string{"a", "c"})
		}
		require.NoError(t, err)
		requireCut(t, cutter, 2)
		assert.Equal(t, []bool{false, false}, released, "the second run finds a freed: it reports false")
		assert.Equal(t, map[string]int64{"b": 1}, weights(t, other), "one release, and b keeps its slot")
	})
}

// A re-sent Release frees the lease once and hands its unit on once; it
// reports false, as its doc says, since its second run found nothing.
func TestResentReleaseFreesOnce(t *testing.T) {
	eachRealBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		l, cutter, other := cutLimiter(t, b, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute})
		for _, h := range []string{"a", "b"} {
			_, err := other.TryAcquire(ctx, h)
			require.NoError(t, err)
		}
		// Two waiters: a release hands one unit to the first, not to both.
		got := make(chan string, 2)
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		for _, w := range []string{"w1", "w2"} {
			go func() {
				if res, err := other.Acquire(wctx, w); err == nil && res.Acquired {
					got <- w
				}
			}()
			require.Eventually(t, func() bool {
				snap, err := other.Inspect(ctx)
				require.NoError(t, err)
				return len(snap.Queue) == map[string]int{"w1": 1, "w2": 2}[w]
			}, 10*time.Second, 5*time.Millisecond, "%s waits", w)
		}

		cutOnce(cutter, key)
		err := l.Release(ctx, "a")
		require.ErrorIs(t, err, slotlimit.ErrNotHeld, "the second run found nothing to free")
		requireCut(t, cutter, 1)
		select {
		case w := <-got:
			assert.Equal(t, "w1", w)
		case <-time.After(10 * time.Second):
			t.Fatal("the freed unit was not handed on")
		}
		assert.Equal(t, map[string]int64{"b": 1, "w1": 1}, weights(t, other), "b keeps its slot; one unit handed on")
		select {
		case w := <-got:
			t.Fatalf("%s was handed a unit too", w)
		case <-time.After(200 * time.Millisecond):
		}
	})
}

// A re-sent Renew extends the lease and reports it held.
func TestResentRenewReportsHeld(t *testing.T) {
	eachRealBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		l, cutter, other := cutLimiter(t, b, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute})
		_, err := other.TryAcquire(ctx, "a")
		require.NoError(t, err)
		cutOnce(cutter, key)
		err = l.Renew(ctx, "a")
		require.NoError(t, err)
		requireCut(t, cutter, 1)
		assert.Equal(t, map[string]int64{"a": 1}, weights(t, other))
	})
}

// A re-sent Acquire that waits keeps its one place in the queue, and the
// claim of the units handed to it, re-sent too, holds them once, for the
// full lease.
func TestResentAcquireWaitsOnceAndClaimsOnce(t *testing.T) {
	eachRealBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		l, cutter, other := cutLimiter(t, b, slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute})
		cutOnce(cutter, key)
		res, err := l.Acquire(ctx, "a")
		require.NoError(t, err)
		requireCut(t, cutter, 1)
		assert.True(t, res.Acquired)
		assert.Equal(t, int64(1), res.Count)

		type outcome struct {
			res slotlimit.Result
			err error
		}
		done := make(chan outcome, 1)
		cutter.Arm(1, "evalsha", key, "waiter") // its first try, which joins the queue
		go func() {
			res, err := l.Acquire(ctx, "waiter")
			done <- outcome{res, err}
		}()
		require.Eventually(t, func() bool { return cutter.Cuts() == 2 }, 10*time.Second, time.Millisecond)
		var snap slotlimit.Snapshot
		require.Eventually(t, func() bool {
			snap, err = other.Inspect(ctx)
			require.NoError(t, err)
			return len(snap.Queue) == 1
		}, 10*time.Second, 5*time.Millisecond, "the waiter is queued once")
		assert.Equal(t, "waiter", snap.Queue[0].ID)

		cutter.Arm(1, "evalsha", key, "waiter") // the claim of the handed units
		start := time.Now()
		err = l.Release(ctx, "a")
		require.NoError(t, err)
		var o outcome
		select {
		case o = <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the waiter was not handed the unit")
		}
		require.NoError(t, o.err)
		assert.True(t, o.res.Acquired)
		assert.Equal(t, int64(1), o.res.Count)
		require.Eventually(t, func() bool { return cutter.Cuts() == 3 }, 10*time.Second, time.Millisecond, "the claim's reply was lost")
		hs, err := other.Holders(ctx)
		require.NoError(t, err)
		require.Len(t, hs, 1)
		assert.Equal(t, "waiter", hs[0].ID)
		assert.WithinDuration(t, start.Add(time.Minute), hs[0].ExpiresAt, 10*time.Second, "claimed for the full lease")
		snap, err = other.Inspect(ctx)
		require.NoError(t, err)
		assert.Empty(t, snap.Queue)
	})
}

// A Lease's acquire, renewal and release, each re-sent, take, renew and
// free the lease once, and its Release answers true, as its first run did:
// the Lease knows its deadline on the server's clock.
func TestResentLeaseCallsAnswerAsTheFirstRun(t *testing.T) {
	eachRealBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		l, cutter, other := cutLimiter(t, b, slotlimit.Config{Key: key, Limit: 3, TTL: time.Minute})

		cutOnce(cutter, key)
		lease, err := l.AcquireLease(ctx, 2)
		require.NoError(t, err)
		requireCut(t, cutter, 1)
		assert.Equal(t, map[string]int64{lease.Holder(): 2}, weights(t, other))

		cutOnce(cutter, key)
		err = lease.Renew(ctx)
		require.NoError(t, err)
		requireCut(t, cutter, 2)

		cutOnce(cutter, key)
		err = lease.Release(ctx)
		require.NoError(t, err)
		requireCut(t, cutter, 3)
		assert.Empty(t, weights(t, other))
		select {
		case <-lease.Lost():
			t.Fatal("a released lease is not lost")
		default:
		}

		cutOnce(cutter, key)
		lease, err = l.TryAcquireLease(ctx, 3)
		require.NoError(t, err)
		requireCut(t, cutter, 4)
		assert.Equal(t, map[string]int64{lease.Holder(): 3}, weights(t, other))
		cutOnce(cutter, key)
		err = lease.Release(ctx)
		require.NoError(t, err)
		requireCut(t, cutter, 5)
		assert.Empty(t, weights(t, other))

		// A handle on a lease that lapsed: the deadline it knows has passed,
		// and a release that finds it gone says so.
		short, cutterShort, _ := cutLimiter(t, b, slotlimit.Config{Key: key, Limit: 3, TTL: 50 * time.Millisecond})
		lease, err = short.AcquireLease(ctx, 1)
		require.NoError(t, err)
		time.Sleep(100 * time.Millisecond)
		cutOnce(cutterShort, key)
		err = lease.Release(ctx)
		require.ErrorIs(t, err, slotlimit.ErrNotHeld, "a lease that lapsed before its release was not freed by it")
		requireCut(t, cutterShort, 1)
	})
}

// KeepAlive's renewals, re-sent, keep the lease: it is not lost. The
// test waits until the server's clock is past the deadline the lease had
// once the three renewals were sent twice, which a renewal must then have
// moved; the TTL leaves a renewal a second of lateness, which a busy
// machine's scheduler does not reach.
func TestResentKeepAliveKeepsTheLease(t *testing.T) {
	eachRealBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		l, cutter, other := cutLimiter(t, b, slotlimit.Config{Key: key, Limit: 1, TTL: 1500 * time.Millisecond})
		lease, err := l.AcquireLease(ctx, 1)
		require.NoError(t, err)
		defer lease.Release(context.Background())
		cutter.Arm(3, "evalsha", key) // three renewals, each sent twice
		work := lease.KeepAlive(ctx)
		require.Eventually(t, func() bool { return !cutter.Armed() }, 20*time.Second, 5*time.Millisecond)
		deadline := holderDeadline(t, other, lease.Holder())
		waitServerPast(t, b, deadline, 10*time.Second) // past it: the renewals held it
		assert.NoError(t, work.Err())
		assert.Equal(t, []string{lease.Holder()}, holderIDs(t, other))
		assert.True(t, holderDeadline(t, other, lease.Holder()).After(deadline), "renewed")
	})
}

// Do, its acquire and its release each re-sent, holds its units once
// while fn runs and frees them after, with no error.
func TestResentDoHoldsOnce(t *testing.T) {
	eachRealBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		l, cutter, other := cutLimiter(t, b, slotlimit.Config{Key: key, Limit: 3, TTL: time.Minute})
		cutter.Arm(1, "evalsha", key)
		err := l.Do(ctx, 2, func(context.Context) error {
			requireCut(t, cutter, 1)
			n, err := other.Count(ctx)
			require.NoError(t, err)
			assert.Equal(t, int64(2), n)
			cutter.Arm(1, "evalsha", key) // the release
			return nil
		})
		require.NoError(t, err)
		requireCut(t, cutter, 2)
		assert.Empty(t, weights(t, other))
	})
}

// A re-sent Counter.Release gives back one slot, never one that another
// holds, and answers as its first run did.
func TestResentCounterReleaseGivesBackOnce(t *testing.T) {
	eachRealBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		client, cutter := b.CutClient(t)
		c, err := slotlimit.NewCounter(client, slotlimit.Config{Key: key, Limit: 3, TTL: time.Minute})
		require.NoError(t, err)
		err = c.Release(ctx) // loads the script: a count of 0 stays 0
		require.ErrorIs(t, err, slotlimit.ErrNotHeld)
		for range 2 {
			res, err := c.TryAcquire(ctx)
			require.NoError(t, err)
			require.True(t, res.Acquired)
		}
		cutOnce(cutter, key)
		err = c.Release(ctx)
		require.NoError(t, err)
		requireCut(t, cutter, 1)
		n, err := c.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "one slot given back: the other holder keeps its own")

		// A release that found nothing answers so again, even when a slot
		// is taken before it is sent again: the first run's answer stands.
		require.NoError(t, b.Client.Set(ctx, key, 0, time.Minute).Err())
		cutOnce(cutter, key)
		err = c.Release(ctx)
		require.ErrorIs(t, err, slotlimit.ErrNotHeld)
		requireCut(t, cutter, 2)
		n, err = c.Count(ctx)
		require.NoError(t, err)
		assert.Zero(t, n)
	})
}

// A re-sent Counter.TryAcquire counts twice, as its doc says: the Counter
// may refuse early, but never admits beyond its limit.
func TestResentCounterAcquireRefusesEarlyNeverOverAdmits(t *testing.T) {
	eachRealBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		client, cutter := b.CutClient(t)
		c, err := slotlimit.NewCounter(client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute})
		require.NoError(t, err)
		_, err = c.TryAcquire(ctx) // loads the script
		require.NoError(t, err)
		require.NoError(t, b.Client.Del(ctx, key).Err())
		cutOnce(cutter, key)
		res, err := c.TryAcquire(ctx)
		require.NoError(t, err)
		requireCut(t, cutter, 1)
		assert.True(t, res.Acquired)
		assert.Equal(t, int64(2), res.Count, "the first run's slot is counted too")
		res, err = c.TryAcquire(ctx)
		require.NoError(t, err)
		assert.False(t, res.Acquired, "refused early: one caller holds a slot")

		// At the last slot, the second run is refused: the caller is told
		// no, and the slot its first run took stays taken. Never more than
		// the limit.
		require.NoError(t, b.Client.Set(ctx, key, 1, time.Minute).Err())
		cutOnce(cutter, key)
		res, err = c.TryAcquire(ctx)
		require.NoError(t, err)
		requireCut(t, cutter, 2)
		assert.False(t, res.Acquired)
		n, err := c.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), n, "at the limit, never beyond")
	})
}

// A call whose reply is lost on every try returns an error that leaves
// the outcome unknown; calling again with the same arguments is safe.
func TestLostReplyThenCallAgain(t *testing.T) {
	eachRealBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		l, cutter, other := cutLimiter(t, b, slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute})
		cutter.Arm(10, "evalsha", key)
		_, err := l.TryAcquire(ctx, "a")
		require.Error(t, err)
		assert.False(t, errors.Is(err, redis.Nil))
		cutter.Arm(0)
		res, err := l.TryAcquire(ctx, "a")
		require.NoError(t, err)
		assert.True(t, res.Acquired)
		assert.Equal(t, int64(1), res.Count)
		assert.Equal(t, []string{"a"}, holderIDs(t, other))
	})
}
