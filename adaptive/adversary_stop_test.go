//go:build linux

package adaptive_test

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

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// stopKeyEnv carries the limit's key to the stopped waiter's process.
const stopKeyEnv = "SLOTLIMIT_ADAPTIVE_KEY"

// A waiter stopped (SIGSTOP) across the release that hands it the one
// slot, with a lease shorter than the claim time, holds the slot for its
// lease at most: another caller takes it after the lapse, and the waiter,
// once continued, reads a notice it must not trust. It does not return
// as a holder beside the other, which would put two slots in a limit of
// one; it gets the slot once the other frees it, and holds it as it
// returns.
func TestAdversaryStoppedWaiterProcess(t *testing.T) {
	if redistest.ChildRole() == "stopped-waiter" {
		stoppedWaiterChild(t)
		return
	}
	b := redistest.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The owner's lease is long; the waiter's, which its queue entry
	// records, is 300 ms.
	owner, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 1, TTL: 10 * time.Second, Window: time.Minute})
	held := take(t, owner, 1)[0]

	child := redistest.StartChild(t, b.Target(), "TestAdversaryStoppedWaiterProcess", "stopped-waiter", stopKeyEnv+"="+key)
	child.Await(t, "waiting", 10*time.Second)
	eventually(t, 10*time.Second, func() bool {
		info, err := owner.Inspect(ctx)
		return err == nil && info.Waiters == 1
	}, "the waiter never queued")
	time.Sleep(300 * time.Millisecond) // its notice subscription settles

	pid := child.Cmd.Process.Pid
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	continued := false
	defer func() {
		if !continued {
			syscall.Kill(pid, syscall.SIGCONT) //nolint:errcheck // it may have exited
		}
	}()
	eventually(t, 5*time.Second, func() bool { return redistest.Stopped(pid) }, "the waiter never stopped")
	require.NoError(t, held.Ignore(ctx)) // handed to the stopped waiter, for 300 ms
	time.Sleep(450 * time.Millisecond)
	other, err := owner.TryAcquire(ctx)
	require.NoError(t, err, "the handed slot lapsed unclaimed")
	require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
	continued = true
	time.Sleep(500 * time.Millisecond) // time for the waiter to return, were it to trust the notice
	require.NoError(t, other.Ignore(ctx))

	line := strings.Fields(child.Await(t, "acquired: ", 10*time.Second))
	require.Len(t, line, 2, child.Transcript())
	assert.Equal(t, line[0], line[1], "the slots held as the waiter's Acquire returned: its own alone\n%s", child.Transcript())
}

func stoppedWaiterChild(t *testing.T) {
	ctx, client := redistest.ChildSetup(t, 4)
	l := newLimiterOn(t, client, adaptive.Config{Key: os.Getenv(stopKeyEnv), Min: 1, Max: 5, Initial: 1,
		TTL: 300 * time.Millisecond, Window: time.Minute})
	fmt.Println("waiting")
	s, err := l.Acquire(ctx)
	require.NoError(t, err)
	info, err := l.Inspect(ctx)
	require.NoError(t, err)
	ids := make([]string, len(info.Holders))
	for i, h := range info.Holders {
		ids[i] = h.ID
	}
	fmt.Printf("acquired: %s %s\n", s.ID(), strings.Join(ids, ","))
	s.Ignore(ctx) //nolint:errcheck // the lease lapses by itself
}
