package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/lock"
)

type lockOut struct {
	Key        string `json:"key"`
	Held       bool   `json:"held"`
	Token      string `json:"token"`
	Owner      string `json:"owner"`
	TTLMillis  int64  `json:"ttl_ms"`
	Waiters    int64  `json:"waiters"`
	FenceFloor int64  `json:"fence_floor"`
}

// lock info shows the owner's token, its time left, its waiters and the
// fence floor; lock break asks first, and hands the lock to the waiter as
// an Unlock would.
func TestLockInfoAndBreak(t *testing.T) {
	url, client := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := testKey(t, "cli-test:lock:")
	m, err := lock.New(client, lock.Config{Key: key, TTL: time.Minute})
	require.NoError(t, err)
	owner, err := m.TryLock(ctx)
	require.NoError(t, err)
	got := make(chan *lock.Lock, 1)
	go func() {
		l, err := m.Lock(ctx)
		if err == nil {
			got <- l
		}
	}()
	require.Eventually(t, func() bool {
		info, err := m.Inspect(ctx)
		return err == nil && info.Waiters == 1
	}, 5*time.Second, 5*time.Millisecond, "a waiter queues")

	r := cli(t, "", nil, "-u", url, "lock", "info", key)
	require.Equal(t, 0, r.code)
	assert.Regexp(t, `(?m)^LOCK +`+key+`$`, r.stdout)
	assert.Regexp(t, `(?m)^state +held$`, r.stdout)
	assert.Regexp(t, `(?m)^owner token +`+owner.Token()+`$`, r.stdout)
	assert.Regexp(t, `(?m)^owner +`+regexp.QuoteMeta(m.Config().Owner)+`$`, r.stdout, "host and pid by default")
	assert.Regexp(t, `(?m)^time left +(5\d(\.\d)?|1m0)s$`, r.stdout)
	assert.Regexp(t, `(?m)^waiting +1$`, r.stdout)
	assert.Regexp(t, `(?m)^fence floor +\d{16} µs`, r.stdout)

	r = cli(t, "", nil, "-u", url, "lock", "info", "-json", key)
	require.Equal(t, 0, r.code)
	var info lockOut
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &info))
	assert.Equal(t, lockOut{Key: key, Held: true, Token: owner.Token(), Owner: m.Config().Owner, TTLMillis: info.TTLMillis, Waiters: 1, FenceFloor: info.FenceFloor}, info)
	assert.True(t, info.TTLMillis > 50_000 && info.TTLMillis <= 60_000, "ttl_ms %d", info.TTLMillis)
	assert.Greater(t, info.FenceFloor, owner.Fence(), "the owner's fence is below the floor")

	// Asked, and answered no: nothing changes.
	r = cli(t, "n\n", nil, "-u", url, "lock", "break", key)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "break lock "+key+", held by "+owner.Token())
	assert.Contains(t, r.stderr, "1 waiting: the first is handed the lock)? [y/N] ")
	assert.Equal(t, "lock "+key+" not broken\n", r.stdout)
	assert.NoError(t, owner.Refresh(ctx), "still the owner's")
	r = cli(t, "", nil, "-u", url, "lock", "break", key) // no answer at all
	assert.Equal(t, 1, r.code)
	assert.NoError(t, owner.Refresh(ctx), "still the owner's")

	// Answered yes: the waiter is handed the lock, with a higher fence.
	r = cli(t, "y\n", nil, "-u", url, "lock", "break", key)
	require.Equal(t, 0, r.code)
	var next *lock.Lock
	select {
	case next = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter was not handed the lock")
	}
	assert.Equal(t, "broke lock "+key+", held by "+owner.Token()+"\nnow held by "+next.Token()+"\n", r.stdout)
	assert.Greater(t, next.Fence(), info.FenceFloor, "the next owner's fence is above the floor")
	assert.True(t, errors.Is(owner.Refresh(ctx), lock.ErrNotHeld), "the broken owner lost it")

	// -yes does not ask; with nobody waiting the lock is free after.
	r = cli(t, "", nil, "-u", url, "lock", "break", "-yes", "-json", key)
	require.Equal(t, 0, r.code)
	assert.Empty(t, r.stderr)
	var broke struct {
		Token    string `json:"token"`
		Broken   bool   `json:"broken"`
		NewOwner string `json:"new_owner"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &broke))
	assert.Equal(t, next.Token(), broke.Token)
	assert.True(t, broke.Broken)
	assert.Empty(t, broke.NewOwner)
	assert.Zero(t, client.Exists(ctx, key).Val())

	// A free lock: the answer is no.
	r = cli(t, "", nil, "-u", url, "lock", "break", "-yes", key)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "lock "+key+" is free: nothing to break\n", r.stdout)
	r = cli(t, "", nil, "-u", url, "lock", "info", key)
	assert.Equal(t, 1, r.code)
	assert.Regexp(t, `(?m)^state +free$`, r.stdout)
	assert.Equal(t, "no lock held at "+key+"\n", r.stderr)
	r = cli(t, "", nil, "-json", "-u", url, "lock", "info", key)
	assert.Equal(t, 1, r.code)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &info))
	assert.False(t, info.Held)
	assert.Empty(t, info.Token)
	assert.Zero(t, info.TTLMillis)

	// Another client's lock, with no expiry.
	require.NoError(t, client.Set(ctx, key, "seed-value", 0).Err())
	r = cli(t, "", nil, "-u", url, "lock", "info", "-json", key)
	require.Equal(t, 0, r.code)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &info))
	assert.Equal(t, "seed-value", info.Token)
	assert.Equal(t, int64(-1), info.TTLMillis, "no expiry")
	r = cli(t, "yes\n", nil, "-u", url, "lock", "break", key)
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stderr, "time left no expiry")
	assert.Zero(t, client.Exists(ctx, key).Val())
}
