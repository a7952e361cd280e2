//go:build linux

package lock_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// A waiter stopped (SIGSTOP) across the hand-off of a lock whose lease is
// shorter than the claim time wakes, once continued, to a notice past the
// deadline its hand-off gave it: the handed lock has lapsed, and another
// owner holds it. The waiter must not return as the owner then; it gets
// the lock once that owner unlocks, with a higher fence.
func TestStoppedWaiterDoesNotTrustLapsedHandOff(t *testing.T) {
	if redistest.ChildRole() == "stopped-waiter" {
		stoppedWaiterChild(t)
		return
	}
	b := redistest.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const ttl = 300 * time.Millisecond
	key := b.Key(t, "lock-test:")
	// The owner's lease is long; the lock is handed to the waiter for its
	// own lease time, which its queue entry records.
	owner, err := newMutexOn(t, b.Client, lock.Config{Key: key, TTL: 10 * time.Second}).TryLock(ctx)
	require.NoError(t, err)

	child := startLockChild(t, b, "TestStoppedWaiterDoesNotTrustLapsedHandOff", "stopped-waiter", key, ttl)
	child.Await(t, "waiting", 10*time.Second)
	queue := lock.SideKey(key, "q")
	require.Eventually(t, func() bool { return b.Client.ZCard(ctx, queue).Val() == 1 }, 10*time.Second, time.Millisecond)
	time.Sleep(300 * time.Millisecond) // its notice subscription settles

	pid := child.Cmd.Process.Pid
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	continued := false
	defer func() {
		if !continued {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}()
	require.Eventually(t, func() bool { return redistest.Stopped(pid) }, 5*time.Second, time.Millisecond, "the waiter stops")
	require.NoError(t, owner.Unlock(ctx)) // handed to the stopped waiter, for 300ms
	time.Sleep(450 * time.Millisecond)
	other := newMutexOn(t, b.Client, lock.Config{Key: key, TTL: 10 * time.Second})
	x, err := other.TryLock(ctx)
	require.NoError(t, err, "the handed lock lapsed unclaimed")
	require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
	continued = true
	time.Sleep(500 * time.Millisecond) // time for the waiter to return, were it to trust the notice
	require.NoError(t, x.Unlock(ctx))

	fields := strings.Fields(child.Await(t, "locked: ", 10*time.Second))
	require.Len(t, fields, 3, child.Transcript())
	fence, err := strconv.ParseInt(fields[0], 10, 64)
	require.NoError(t, err)
	assert.Greater(t, fence, x.Fence(), "the waiter's fence is above the owner's that came between\n%s", child.Transcript())
	assert.Equal(t, fields[1], fields[2], "the key held the waiter's token as its Lock returned\n%s", child.Transcript())
}

func stoppedWaiterChild(t *testing.T) {
	ctx, client, m := childMutex(t, 4)
	fmt.Println("waiting")
	l, err := m.Lock(ctx)
	require.NoError(t, err)
	holder := client.Get(ctx, m.Config().Key).Val()
	fmt.Printf("locked: %d %s %s\n", l.Fence(), l.Token(), holder)
	l.Unlock(ctx)
}
