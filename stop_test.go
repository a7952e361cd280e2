//go:build linux

package slotlimit_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A waiter stopped (SIGSTOP) across a release that hands it the one unit,
// with a lease shorter than the claim time, wakes, once continued, to a
// notice past the deadline its hand-off gave it: the handed lease has
// lapsed, and another holder took the unit. The waiter must not return as
// a holder then, which would put two holders in a limit of one; it gets
// the unit once that holder releases it, and holds it as it returns.
func TestStoppedWaiterDoesNotTrustLapsedHandOff(t *testing.T) {
	if os.Getenv(procChildEnv) == "stopped-waiter" {
		stoppedWaiterChild(t)
		return
	}
	b := newRealRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const ttl = 300 * time.Millisecond
	key := testKey(t, b)
	// The owner's lease is long; the unit is handed to the waiter for its
	// own lease time, which its queue entry records.
	long := newLimiterOn(t, b.Client, slotlimit.Config{Key: key, Limit: 1, TTL: 10 * time.Second})
	res, err := long.TryAcquire(ctx, "owner")
	require.NoError(t, err)
	require.True(t, res.Acquired)

	child := startProcChild(t, "TestStoppedWaiterDoesNotTrustLapsedHandOff", "stopped-waiter", 0, procTargetOf(b), key, 1, ttl.String())
	child.Await(t, "waiting", 10*time.Second)
	queue := "{" + key + "}/q"
	require.Eventually(t, func() bool { return b.Client.ZCard(ctx, queue).Val() == 1 }, 10*time.Second, time.Millisecond)
	time.Sleep(300 * time.Millisecond) // its notice subscription settles

	pid := child.Cmd.Process.Pid
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	continued := false
	defer func() {
		if !continued {
			syscall.Kill(pid, syscall.SIGCONT) //nolint:errcheck // it may have exited
		}
	}()
	require.Eventually(t, func() bool { return redistest.Stopped(pid) }, 5*time.Second, time.Millisecond, "the waiter stops")
	err = long.Release(ctx, "owner") // handed to the stopped waiter, for 300ms
	require.NoError(t, err)
	time.Sleep(450 * time.Millisecond)
	res, err = long.TryAcquire(ctx, "other")
	require.NoError(t, err)
	require.True(t, res.Acquired, "the handed lease lapsed unclaimed")
	require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
	continued = true
	time.Sleep(500 * time.Millisecond) // time for the waiter to return, were it to trust the notice
	err = long.Release(ctx, "other")
	require.NoError(t, err)

	holders := child.Await(t, "acquired: ", 10*time.Second)
	assert.Equal(t, "waiter", holders, "the leases held as the waiter's Acquire returned\n%s", child.Transcript())
}

func stoppedWaiterChild(t *testing.T) {
	ctx, client, key, limit, arg, _ := procChildSetup(t)
	ttl, err := time.ParseDuration(arg)
	require.NoError(t, err)
	l := newLimiterOn(t, client, slotlimit.Config{Key: key, Limit: limit, TTL: ttl})
	fmt.Println("waiting")
	res, err := l.Acquire(ctx, "waiter")
	require.NoError(t, err)
	require.True(t, res.Acquired)
	holders, err := l.Holders(ctx)
	require.NoError(t, err)
	ids := make([]string, len(holders))
	for i, h := range holders {
		ids[i] = h.ID
	}
	fmt.Printf("acquired: %s\n", strings.Join(ids, ","))
	l.Release(ctx, "waiter") //nolint:errcheck // the lease lapses by itself
}
