package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// aclClient makes a Redis user on s granted rules (key and channel
// patterns, commands) and returns a client of it, and one of the default
// user.
func aclClient(t *testing.T, s *redistest.Server, name string, rules ...string) (user, admin *redis.Client) {
	t.Helper()
	ctx := context.Background()
	admin = redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { admin.Close() })
	args := []any{"ACL", "SETUSER", name, "reset", "on", ">pw"}
	for _, r := range rules {
		args = append(args, r)
	}
	require.NoError(t, admin.Do(ctx, args...).Err())
	user = redis.NewClient(&redis.Options{Addr: s.Addr, Username: name, Password: "pw"})
	t.Cleanup(func() { user.Close() })
	return user, admin
}

// TryLock sends MULTI, SET NX GET PX, TIME, EXEC on the lock's key alone.
// A user granted that key ran it before the owner record came; the owner
// record, a settings record, must not fail the call that carries it, on
// its first try or any later one.
func TestTryLockUnderKeyOnlyACL(t *testing.T) {
	s := redistest.StartServer(t)
	ctx := context.Background()
	user, admin := aclClient(t, s, "lk", "~jobs:*", "+multi", "+exec", "+set", "+time", "+get", "+ping")

	for i := range 3 {
		m, err := lock.New(user, lock.Config{Key: "jobs:nightly"})
		require.NoError(t, err)
		require.NoError(t, admin.Del(ctx, "jobs:nightly").Err())
		_, err = m.TryLock(ctx)
		require.NoError(t, err, "try %d", i)
	}
}

// Under an ACL that grants the lock's key and queue but not the owner
// records beside it, every call that carries the record (TryLock's MULTI,
// a waiter's try, a Refresh) is refused by Redis before anything runs,
// and is sent again at once without it: each succeeds, as it did before
// the record came, and the refused record waits its minute, so that it
// costs one round trip more a minute, not one a call. No record is
// written, and the owner is unknown.
func TestOwnerRefusedByACLNeverFailsACall(t *testing.T) {
	s := redistest.StartServer(t)
	ctx := context.Background()
	user, admin := aclClient(t, s, "lk", "~jobs:*", "~{jobs:*}/lock:q*", "&*", "+@all")
	writes := &ownerWrites{}
	user.AddHook(writes)
	const key = "jobs:nightly"
	m := newMutexOn(t, user, lock.Config{Key: key, TTL: time.Minute, Owner: "nightly job"})

	l, err := m.TryLock(ctx)
	require.NoError(t, err, "TryLock")
	assert.Equal(t, l.Token(), admin.Get(ctx, key).Val(), "TryLock took the lock, once")
	assert.EqualValues(t, 1, writes.n.Load(), "one refused try with the record")
	require.NoError(t, l.Refresh(ctx), "Refresh")
	require.NoError(t, l.Unlock(ctx), "Unlock")
	for i := range 3 {
		l, err := m.TryLock(ctx)
		require.NoError(t, err, "TryLock %d", i)
		require.NoError(t, l.Unlock(ctx))
	}
	assert.EqualValues(t, 1, writes.n.Load(), "the refused record waits its minute")

	lock.OwnerDueNow(m) // a minute on: a Refresh carries it
	l, err = m.TryLock(ctx)
	require.NoError(t, err)
	require.NoError(t, l.Refresh(ctx), "Refresh with the record due")
	assert.EqualValues(t, 2, writes.n.Load())
	require.NoError(t, l.Unlock(ctx))

	lock.OwnerDueNow(m) // a minute on: a Lock's try carries it
	l, err = m.Lock(ctx)
	require.NoError(t, err, "Lock with the record due")
	assert.EqualValues(t, 3, writes.n.Load())
	assert.Equal(t, l.Token(), admin.Get(ctx, key).Val(), "Lock took the lock, once")

	assert.Zero(t, admin.Exists(ctx, lock.OwnerKey(key, l.Token())).Val(), "no record written")
	info, err := newMutexOn(t, admin, lock.Config{Key: key}).Inspect(ctx)
	require.NoError(t, err)
	assert.Equal(t, l.Token(), info.Token)
	assert.Empty(t, info.Owner, "the owner is unknown")
	require.NoError(t, l.Unlock(ctx))
}

// A process that makes a Mutex per request writes one owner record per
// lock key and description, at most once a minute, not one per Mutex:
// its Mutexes of one description and lease time share a handle ID, and,
// on one client, the memo of when they last wrote it. Each token is
// still its own.
func TestOwnerRecordSharedByTheMutexesOfAProcess(t *testing.T) {
	b := redistest.Redis(t)
	ctx := context.Background()
	client := b.NewClient(t)
	writes := &ownerWrites{}
	client.AddHook(writes)
	key := b.Key(t, "lock-test:")
	cfg := lock.Config{Key: key, TTL: 10 * time.Second, Owner: "api request"}

	tokens := map[string]bool{}
	var first string
	for i := range 20 {
		l, err := newMutexOn(t, client, cfg).TryLock(ctx)
		require.NoError(t, err)
		require.NoError(t, l.Unlock(ctx))
		assert.False(t, tokens[l.Token()], "token %d is its own", i)
		tokens[l.Token()] = true
		if first == "" {
			first = l.Token()
		}
		assert.Equal(t, lock.OwnerKey(key, first), lock.OwnerKey(key, l.Token()), "Mutex %d shares the handle ID", i)
	}
	assert.EqualValues(t, 1, writes.n.Load(), "one owner record write for 20 Mutexes")
	owner, _ := ownerOf(t, b, key, first)
	assert.Equal(t, "api request", owner)

	// Another description, or another lease time, is another ID, with a
	// record of its own.
	for _, other := range []lock.Config{
		{Key: key, TTL: cfg.TTL, Owner: "batch job"},
		{Key: key, TTL: time.Minute, Owner: cfg.Owner},
	} {
		token := mustToken(t, newMutexOn(t, client, other))
		assert.NotEqual(t, lock.OwnerKey(key, first), lock.OwnerKey(key, token), "%+v", other)
		owner, _ := ownerOf(t, b, key, token)
		assert.Equal(t, other.Owner, owner, "%+v", other)
	}
	assert.EqualValues(t, 3, writes.n.Load())

	// Another client, which may be of another Redis, keeps its own memo:
	// its first call writes the record there.
	require.NoError(t, b.Client.Del(ctx, lock.OwnerKey(key, first)).Err())
	mustToken(t, newMutexOn(t, b.NewClient(t), cfg))
	owner, _ = ownerOf(t, b, key, first)
	assert.Equal(t, "api request", owner, "written by another client's Mutex")

	// In another process, with another random value, the ID differs.
	restore := lock.SetProcessSecret("another process")
	defer restore()
	token := mustToken(t, newMutexOn(t, client, cfg))
	assert.NotEqual(t, first[:10], token[:10], "another process's ID")
}
