package lock_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/record"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// ownerWrites counts the commands sent that name an owner record, alone
// or in a MULTI, a script's keys included.
type ownerWrites struct{ n atomic.Int64 }

func (c *ownerWrites) count(cmd redis.Cmder) {
	if cmd.Name() == "get" {
		return // a read
	}
	for _, a := range cmd.Args() {
		if s, ok := a.(string); ok && strings.Contains(s, "lock:owner:") {
			c.n.Add(1)
			return
		}
	}
}

func (c *ownerWrites) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *ownerWrites) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") { // an EVAL follows, the same call
			c.count(cmd)
		}
		return err
	}
}
func (c *ownerWrites) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}

// ownerOf returns the description in the owner record of the Mutex that
// made token, and the record's time to live.
func ownerOf(t *testing.T, b *redistest.Backend, key, token string) (string, time.Duration) {
	t.Helper()
	ctx := context.Background()
	name := lock.OwnerKey(key, token)
	require.NotEmpty(t, name, "a Mutex's token names its owner record")
	fields, err := record.Read(ctx, b.Client, name)
	require.NoError(t, err)
	return fields.Get("owner"), b.Client.PTTL(ctx, name).Val()
}

// The owner description is written at most once a minute per client,
// inside the calls it makes anyway: only the first call, or the first
// once it is due again, carries it, and no call sends a command more for
// it. (A Cluster client sends a MULTI through a node's client, which its
// hooks do not see: there the record's value tells whether it was
// written.)
func TestOwnerWrittenOncePerMinute(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client := b.NewClient(t)
		writes := &ownerWrites{}
		client.AddHook(writes)
		_, cluster := client.(*redis.ClusterClient)
		key := b.Key(t, "lock-test:")
		m := newMutexOn(t, client, lock.Config{Key: key, TTL: 10 * time.Second, Owner: "billing worker 7"})
		cycle := func() string {
			l, err := m.TryLock(ctx)
			require.NoError(t, err)
			require.NoError(t, l.Refresh(ctx))
			require.NoError(t, l.Unlock(ctx))
			return l.Token()
		}

		token := cycle()
		owner, ttl := ownerOf(t, b, key, token)
		assert.Equal(t, "billing worker 7", owner)
		assert.True(t, ttl > 10*time.Second && ttl <= record.Every+10*time.Second, "the record's PTTL %v is a minute and the lease time", ttl)
		name := lock.OwnerKey(key, token)
		require.NoError(t, b.Client.Set(ctx, name, "owner=marked", time.Minute).Err())
		for range 4 {
			cycle()
		}
		owner, _ = ownerOf(t, b, key, token)
		assert.Equal(t, "marked", owner, "not written again within the minute")
		if !cluster {
			assert.Equal(t, int64(1), writes.n.Load(), "one write in five TryLocks, Refreshes and Unlocks")
		}

		lock.OwnerDueNow(m)   // a minute on
		l, err := m.Lock(ctx) // free: taken by its first try, which writes it
		require.NoError(t, err)
		owner, _ = ownerOf(t, b, key, l.Token())
		assert.Equal(t, "billing worker 7", owner, "a Lock's try writes it when due")
		if !cluster {
			assert.Equal(t, int64(2), writes.n.Load(), "one write more")
		}
		info, err := m.Inspect(ctx)
		require.NoError(t, err)
		assert.Equal(t, "billing worker 7", info.Owner)
		assert.Equal(t, l.Token(), info.Token)
		require.NoError(t, l.Unlock(ctx))
	})
}

// A Refresh writes the description when it is due, so that it outlives
// a lease that refreshes keep for longer than a minute and the lease time
// with no new TryLock or Lock.
func TestOwnerSurvivesLongRefresh(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		m, key := newMutex(t, b, 5*time.Second)
		l, err := m.TryLock(ctx)
		require.NoError(t, err)
		defer l.Unlock(ctx)
		name := lock.OwnerKey(key, l.Token())

		// Past the record's expiry: gone, as a minute and the lease time
		// after it was written, while refreshes kept the lease.
		require.NoError(t, b.Client.Del(ctx, name).Err())
		lock.OwnerDueNow(m)
		require.NoError(t, l.Refresh(ctx))
		owner, ttl := ownerOf(t, b, key, l.Token())
		assert.Equal(t, m.Config().Owner, owner, "written again by the Refresh")
		lease := b.Client.PTTL(ctx, key).Val()
		assert.Greater(t, ttl, lease+50*time.Second, "the record outlives the lease by about a minute")
		info, err := m.Inspect(ctx)
		require.NoError(t, err)
		assert.Equal(t, m.Config().Owner, info.Owner)
	})
}

// The string at the key is the bare token, 26 characters of base32, as
// before and as redislock and redsync read it; the description lives
// beside it. A token another client wrote has no description.
func TestOwnerBesideTheKey(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		m, key := newMutex(t, b, time.Minute)
		l, err := m.TryLock(ctx)
		require.NoError(t, err)
		assert.Equal(t, l.Token(), b.Client.Get(ctx, key).Val(), "the key holds the token alone")
		assert.Regexp(t, `^[A-Z2-7]{26}$`, l.Token())
		require.NoError(t, l.Unlock(ctx))
		next, err := m.TryLock(ctx)
		require.NoError(t, err)
		assert.Equal(t, l.Token()[:10], next.Token()[:10], "one Mutex's tokens share its handle ID")
		assert.NotEqual(t, l.Token(), next.Token())
		require.NoError(t, next.Unlock(ctx))
		other := newMutexOn(t, b.Client, lock.Config{Key: key, TTL: time.Minute, Owner: "another"})
		assert.NotEqual(t, lock.OwnerKey(key, l.Token()), lock.OwnerKey(key, mustToken(t, other)), "another description has its own")

		// redislock's token (22 characters of base64), and a classic
		// script's, have no description; nor has a token of base32 that
		// no Mutex wrote.
		for _, token := range []string{"mkV1bWJi8Ze3Xu5GjBkQWg", "classic-owner-1", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"} {
			require.NoError(t, b.Client.Set(ctx, key, token, time.Minute).Err())
			info, err := m.Inspect(ctx)
			require.NoError(t, err)
			assert.Equal(t, token, info.Token)
			assert.Empty(t, info.Owner, "%s: unknown", token)
		}
		require.NoError(t, b.Client.Del(ctx, key).Err())
		info, err := m.Inspect(ctx)
		require.NoError(t, err)
		assert.Empty(t, info.Owner, "a free lock has no owner")
	})
}

// mustToken takes the lock on m, which must be free, frees it and returns
// the token it had.
func mustToken(t *testing.T, m *lock.Mutex) string {
	t.Helper()
	ctx := context.Background()
	l, err := m.TryLock(ctx)
	require.NoError(t, err)
	require.NoError(t, l.Unlock(ctx))
	return l.Token()
}

// The default description is the host's name and the process ID; a
// description longer than MaxOwner bytes, or with a control character,
// is refused.
func TestOwnerConfig(t *testing.T) {
	b := redistest.Miniredis(t)
	m := newMutexOn(t, b.Client, lock.Config{Key: "k"})
	host, err := os.Hostname()
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("%s pid %d", host, os.Getpid()), m.Config().Owner)

	ok := strings.Repeat("é", lock.MaxOwner/2)
	m = newMutexOn(t, b.Client, lock.Config{Key: "k", Owner: ok})
	assert.Equal(t, ok, m.Config().Owner)
	for _, bad := range []string{strings.Repeat("x", lock.MaxOwner+1), "two\nlines", "\xff"} {
		_, err := lock.New(b.Client, lock.Config{Key: "k", Owner: bad})
		assert.ErrorIs(t, err, lock.ErrInvalidConfig, "%q", bad)
	}
	_, err = lock.New(b.Client, lock.Config{Key: "{k}/lock:owner:ABCDEFGHIJ"})
	assert.ErrorIs(t, err, lock.ErrInvalidConfig, "an owner record is no lock's key")
	_, err = lock.New(b.Client, lock.Config{Key: "{t}:x:lock:owner:ABCDEFGHIJ"})
	assert.ErrorIs(t, err, lock.ErrInvalidConfig, "an owner record is no lock's key")
}

// A TryLock, a waiter's try and a Refresh whose reply is lost, sent again
// by go-redis, write the description once and answer as one call.
func TestOwnerResentTakesEffectOnce(t *testing.T) {
	redistest.EachCutBackend(t, lock.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		key := b.Key(t, "lock-test:")
		m := newMutexOn(t, client, lock.Config{Key: key, TTL: time.Minute, Owner: "resent"})
		cutter.Arm(1, "set", key)
		l, err := m.TryLock(ctx)
		cutter.RequireOneMore(t, 0)
		if _, cluster := client.(*redis.ClusterClient); cluster && err != nil {
			// go-redis sends a transaction to a Cluster node once.
			assert.NotErrorIs(t, err, lock.ErrNotObtained)
		} else {
			require.NoError(t, err)
			owner, _ := ownerOf(t, b, key, l.Token())
			assert.Equal(t, "resent", owner)
			assert.Equal(t, l.Token(), b.Client.Get(ctx, key).Val())

			lock.OwnerDueNow(m)
			require.NoError(t, b.Client.Del(ctx, lock.OwnerKey(key, l.Token())).Err())
			cutter.Arm(1, "evalsha", key)
			require.NoError(t, l.Refresh(ctx))
			cutter.RequireOneMore(t, 1)
			owner, _ = ownerOf(t, b, key, l.Token())
			assert.Equal(t, "resent", owner, "the re-sent Refresh wrote it")
			require.NoError(t, l.Unlock(ctx))
		}

		lock.OwnerDueNow(m)
		before := cutter.Cuts()
		cutter.Arm(1, "evalsha", key)
		l, err = m.Lock(ctx)
		cutter.RequireOneMore(t, before)
		require.NoError(t, err, "a re-sent try holds the lock its first run took")
		info, err := m.Inspect(ctx)
		require.NoError(t, err)
		assert.Equal(t, l.Token(), info.Token)
		assert.Equal(t, "resent", info.Owner)
		require.NoError(t, l.Unlock(ctx))
	})
}
