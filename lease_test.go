package slotlimit_test

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// A nil Lease, such as the one a failed acquire returns, was not made by
// New: each of its methods returns an error matching ErrInvalidConfig, and
// none panics, so that deferring Release right after an acquire is safe.
// A Lease already released holds nothing: its Release, Renew and
// KeepAlive report ErrNotHeld, naming the method and the key.
func TestNilAndReleasedLeases(t *testing.T) {
	ctx := context.Background()
	var nilLease *slotlimit.Lease
	err := nilLease.Release(ctx)
	assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "a nil Lease's Release")
	assert.EqualError(t, err, "slotlimit: release: invalid config: not made by New")
	err = nilLease.Renew(ctx)
	assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "a nil Lease's Renew")
	assert.EqualError(t, err, "slotlimit: renew: invalid config: not made by New")
	work := nilLease.KeepAlive(ctx)
	assert.ErrorIs(t, context.Cause(work), slotlimit.ErrInvalidConfig, "a nil Lease's KeepAlive")
	var nilCtx context.Context
	work = nilLease.KeepAlive(nilCtx)
	assert.ErrorIs(t, context.Cause(work), slotlimit.ErrInvalidConfig, "a nil Lease's KeepAlive with a nil ctx: not made by New comes first")
	assert.EqualError(t, context.Cause(work), "slotlimit: keep alive: invalid config: not made by New")

	b := newMiniredis(t)
	key := testKey(t, b)
	l := newLimiter(t, b, key, 1, time.Minute)
	held, err := l.TryAcquireLease(ctx, 1)
	require.NoError(t, err)
	require.True(t, held.Result().Acquired)
	refused, err := l.TryAcquireLease(ctx, 1)
	require.ErrorIs(t, err, slotlimit.ErrNotAcquired, "a refusal takes the error path")
	require.Nil(t, refused)
	err = refused.Release(ctx)
	assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig)
	assert.Equal(t, []string{held.Holder()}, holderIDs(t, l), "a refusal holds nothing, and releasing it touches no other")

	err = held.Release(ctx)
	assert.NoError(t, err)
	err = held.Release(ctx)
	assert.ErrorIs(t, err, slotlimit.ErrNotHeld, "a second release frees nothing")
	assert.EqualError(t, err, `slotlimit: release "`+key+`": not held`)
	err = held.Renew(ctx)
	assert.ErrorIs(t, err, slotlimit.ErrNotHeld, "a released lease is not renewed")
	assert.EqualError(t, err, `slotlimit: renew "`+key+`": not held`)
	work = held.KeepAlive(ctx)
	assert.ErrorIs(t, context.Cause(work), slotlimit.ErrNotHeld, "a released lease is not kept alive")
	assert.Empty(t, holderIDs(t, l))
}

func TestLeaseHoldersAreRandom128Bit(t *testing.T) {
	b := newMiniredis(t)
	l := newLimiter(t, b, testKey(t, b), 10, time.Minute)
	seen := map[string]bool{}
	for i := 0; i < 5; i++ {
		lease, err := l.AcquireLease(context.Background(), 1)
		require.NoError(t, err)
		id := lease.Holder()
		assert.Len(t, id, 26, "128 bits in base32")
		assert.False(t, seen[id])
		seen[id] = true
	}
	assert.Len(t, holderIDs(t, l), 5)
}

// KeepAlive keeps a lease past many TTLs, and stops renewing on release.
// The test waits until the server's clock is past the lease's deadlines,
// the first and two that renewals gave it, so that each passing proves a
// renewal; the TTL leaves a renewal a second of lateness, which a busy
// machine's scheduler does not reach.
func TestLeaseKeepAliveAndStop(t *testing.T) {
	b := newRealRedis(t)
	client, tries := countedClient(t, b)
	const ttl = 1500 * time.Millisecond
	l := newLimiterOn(t, client, slotlimit.Config{Key: testKey(t, b), Limit: 1, TTL: ttl})
	ctx := context.Background()

	lease, err := l.AcquireLease(ctx, 1)
	require.NoError(t, err)
	work := lease.KeepAlive(ctx)
	assert.Equal(t, work, lease.KeepAlive(ctx), "one keep-alive per lease")
	deadline := holderDeadline(t, l, lease.Holder())
	for i := range 3 {
		waitServerPast(t, b, deadline, 10*time.Second)
		assert.Equal(t, []string{lease.Holder()}, holderIDs(t, l), "alive past deadline %d", i)
		next := holderDeadline(t, l, lease.Holder())
		assert.True(t, next.After(deadline), "renewed: deadline %d was %v, now %v", i, deadline, next)
		deadline = next
	}
	assert.GreaterOrEqual(t, tries.get("renew"), int64(3), "a renewal moved each deadline")
	assert.NoError(t, work.Err())

	err = lease.Release(ctx)
	require.NoError(t, err)
	assert.ErrorIs(t, work.Err(), context.Canceled, "the work context ends with the lease")
	assert.NotErrorIs(t, context.Cause(work), slotlimit.ErrNotHeld)
	renews := tries.get("renew")
	time.Sleep(ttl)
	assert.Equal(t, renews, tries.get("renew"), "no renewal after release")
	select {
	case <-lease.Lost():
		t.Fatal("a released lease is not lost")
	default:
	}
}

// Lost fires when the lease is deleted under it, and KeepAlive never
// takes it back.
func TestLeaseLostWhenKeyDeleted(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		const ttl = 300 * time.Millisecond
		l := newLimiter(t, b, key, 1, ttl)
		lease, err := l.AcquireLease(ctx, 1)
		require.NoError(t, err)
		work := lease.KeepAlive(ctx)

		require.NoError(t, b.Client.Del(ctx, key).Err())
		select {
		case <-lease.Lost():
		case <-time.After(10 * time.Second): // a bound for gross failures
			t.Fatal("Lost did not fire")
		}
		<-work.Done()
		assert.ErrorIs(t, context.Cause(work), slotlimit.ErrNotHeld)
		assert.Empty(t, holderIDs(t, l), "the lease was not re-acquired")
		err = lease.Release(ctx)
		require.ErrorIs(t, err, slotlimit.ErrNotHeld)
	})
}

// When renewals keep failing until the lease must have lapsed, it is lost.
func TestLeaseLostWhenRenewalsFailPastDeadline(t *testing.T) {
	b := newMiniredis(t)
	client := newClient(t, b)
	var failing atomic.Bool
	client.AddHook(hook(func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if failing.Load() && scriptOp(cmd) == "renew" {
			cmd.SetErr(os.ErrDeadlineExceeded)
			return cmd.Err()
		}
		return next(ctx, cmd)
	}))
	const ttl = 300 * time.Millisecond
	l := newLimiterOn(t, client, slotlimit.Config{Key: testKey(t, b), Limit: 1, TTL: ttl})
	ctx := context.Background()
	lease, err := l.AcquireLease(ctx, 1)
	require.NoError(t, err)
	start := time.Now()
	failing.Store(true)
	work := lease.KeepAlive(ctx)
	select {
	case <-lease.Lost():
		assert.GreaterOrEqual(t, time.Since(start), ttl*9/10, "not before the lease could have lapsed")
	case <-time.After(5 * ttl):
		t.Fatal("Lost did not fire")
	}
	<-work.Done()
	assert.True(t, errors.Is(context.Cause(work), slotlimit.ErrNotHeld))
}

// A lease from the Limiter.Lease accessor works on a named holder.
func TestLeaseAccessor(t *testing.T) {
	b := newMiniredis(t)
	ctx := context.Background()
	l := newLimiter(t, b, testKey(t, b), 1, time.Minute)
	_, err := l.TryAcquire(ctx, "device-1")
	require.NoError(t, err)
	lease := l.Lease("device-1")
	err = lease.Renew(ctx)
	require.NoError(t, err)
	err = lease.Release(ctx)
	require.NoError(t, err)
	assert.Empty(t, holderIDs(t, l))
	err = lease.Renew(ctx)
	require.ErrorIs(t, err, slotlimit.ErrNotHeld, "never re-acquires")
	assert.Empty(t, holderIDs(t, l))
}

// A TryAcquireLease whose reply is lost, with no try left to send it
// again, releases its generated holder, which nobody else could release.
func TestTryAcquireLeaseUnknownOutcomeReleases(t *testing.T) {
	b := newMiniredis(t)
	l := newLimiter(t, b, testKey(t, b), 1, time.Minute)
	client := newClient(t, b, noRetries)
	var armed atomic.Bool
	armed.Store(true)
	client.AddHook(failAfterSend(&armed, func() error { return os.ErrDeadlineExceeded }))
	faulty := newLimiterOn(t, client, l.Config())

	lease, err := faulty.TryAcquireLease(context.Background(), 1)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.Nil(t, lease)
	assert.False(t, armed.Load(), "the fault struck after the script ran")
	assert.Empty(t, holderIDs(t, l), "no phantom slot")
}

// A lease handed over by a release is claimed to its full TTL: its holder keeps it
// past the claim time with no KeepAlive.
func TestHandedLeaseOutlivesClaimTime(t *testing.T) {
	b := newRealRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	key := testKey(t, b)
	l := newLimiter(t, b, key, 1, time.Minute)
	_, err := l.TryAcquire(ctx, "first")
	require.NoError(t, err)
	got := make(chan *slotlimit.Lease, 1)
	go func() {
		lease, err := l.AcquireLease(ctx, 1)
		assert.NoError(t, err)
		got <- lease
	}()
	awaitQueued(t, b, key, 1)
	awaitSubscribed(t, b, key)
	err = l.Release(ctx, "first")
	require.NoError(t, err)
	lease := <-got
	require.NotNil(t, lease)
	time.Sleep(4 * time.Second) // past the 3s claim time
	assert.Equal(t, []string{lease.Holder()}, holderIDs(t, l))
	select {
	case <-lease.Lost():
		t.Fatal("a claimed lease is not lost")
	default:
	}
	err = lease.Release(ctx)
	require.NoError(t, err)
}

// A Release that failed can be tried again.
func TestLeaseReleaseRetriesAfterError(t *testing.T) {
	b := newMiniredis(t)
	ctx := context.Background()
	client := newClient(t, b)
	var failing atomic.Bool
	client.AddHook(hook(func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if failing.Load() && scriptOp(cmd) == "release" {
			cmd.SetErr(os.ErrDeadlineExceeded)
			return cmd.Err()
		}
		return next(ctx, cmd)
	}))
	l := newLimiterOn(t, client, slotlimit.Config{Key: testKey(t, b), Limit: 1, TTL: time.Minute})
	lease, err := l.AcquireLease(ctx, 1)
	require.NoError(t, err)
	failing.Store(true)
	err = lease.Release(ctx)
	require.Error(t, err)
	failing.Store(false)
	err = lease.Release(ctx)
	require.NoError(t, err)
	assert.Empty(t, holderIDs(t, l))
}
