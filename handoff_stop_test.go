//go:build linux

package slotlimit_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// handOffStops are the points where a waiter is stopped across the
// hand-off that serves it: as it takes a notice it trusts, before its
// claim (the claim then finds another holder, or with no Replicas there is
// no claim before the return), or, with Replicas, while its claim, which
// ran in time, waits for a paused replica's WAIT.
// handOffTTL is the waiter's lease: long enough that a loaded machine
// reads the hand-off's notice while it is still held, which the tests
// need to stop the waiter across it.
const handOffTTL = 2 * time.Second

var handOffStops = []struct {
	name     string
	replicas int
	inWait   bool // stopped while its claim's WAIT waits; else as it takes the notice
}{
	{"replicas=0/taking", 0, false},
	{"replicas=1/taking", 1, false},
	{"replicas=1/claim-waiting", 1, true},
}

// A waiter stopped (SIGSTOP) across the release that hands it the one
// unit under a lease of handOffTTL, after it read the notice and judged it in
// time, is continued once the handed lease has lapsed and another holder
// took the unit. With or without Replicas, it must not return as a holder
// beside the other, which would put two holders in a limit of one: it
// keeps waiting, and returns once the other releases, holding the unit
// alone, its Lease not lost (no claim was sent behind a hand-off it did
// not return with).
func TestStoppedAcrossHandOffNeverReturnsALapsedLease(t *testing.T) {
	if redistest.ChildRole() == "hand-off-stopped" {
		handOffStoppedChild(t)
		return
	}
	for _, stop := range handOffStops {
		t.Run(stop.name, func(t *testing.T) {
			// A try of the waiter's own, sent as the release hands it
			// what it waits for, takes it before the waiter reads the
			// notice; the scenario then runs again, on new servers.
			for attempt := 1; ; attempt++ {
				if func() bool {
					r := redistest.StartReplicated(t)
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					key := "slotlimit-test:stopped-across-hand-off"
					// A claim that met NOSCRIPT would run again after the WAIT.
					require.NoError(t, slotlimit.LoadClaimScript(ctx, r.Client))
					// The parent's holders send no WAIT, which the paused replica
					// would hold up.
					long := newLimiterOn(t, r.Client, slotlimit.Config{Key: key, Limit: 1, TTL: 10 * time.Second})
					res, err := long.TryAcquire(ctx, "owner")
					require.NoError(t, err)
					require.True(t, res.Acquired)

					child := startProcChild(t, "TestStoppedAcrossHandOffNeverReturnsALapsedLease", "hand-off-stopped", stop.replicas,
						procTarget{Addrs: []string{r.Master.Addr}}, key, 1, "")
					pid := child.Cmd.Process.Pid
					defer syscall.Kill(pid, syscall.SIGCONT) //nolint:errcheck // it may run, or have exited
					child.Await(t, "waiting", 10*time.Second)
					queue, channel := "{"+key+"}/q", "{"+key+"}/free"
					require.Eventually(t, func() bool {
						return r.Client.ZCard(ctx, queue).Val() == 1 && r.Client.PubSubNumSub(ctx, channel).Val()[channel] == 1
					}, 10*time.Second, time.Millisecond, "the waiter queues and subscribes")

					require.NoError(t, long.Release(ctx, "owner")) // handed to the waiter, for its lease, handOffTTL
					if first, _ := child.AwaitFirst(t, 10*time.Second, "taking", "acquired: "); first != "taking" {
						return false
					}
					// The waiter stops itself as it takes the notice, before its
					// claim; with inWait, its claim is sent once the replica is
					// paused, so that the claim's WAIT waits.
					require.Eventually(t, func() bool { return redistest.Stopped(pid) }, 10*time.Second, time.Millisecond, "the waiter stops")
					if stop.inWait {
						replica := redistest.ServerPid(t, ctx, r.ReplicaClient)
						redistest.StopProcess(t, replica)
						defer syscall.Kill(replica, syscall.SIGCONT) //nolint:errcheck // it may run already
						time.Sleep(300 * time.Millisecond)           // a stop stopSelf sees as one
						require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
						require.Eventually(t, func() bool { return redistest.BlockedClients(t, ctx, r.Client) == 1 }, 10*time.Second, time.Millisecond,
							"the waiter's claim waits for the replica")
						redistest.StopProcess(t, pid)
						require.NoError(t, syscall.Kill(replica, syscall.SIGCONT))
						require.Eventually(t, func() bool { return redistest.BlockedClients(t, ctx, r.Client) == 0 }, 10*time.Second, time.Millisecond,
							"the claim's WAIT is answered, to the stopped waiter")
					}
					require.Eventually(t, func() bool {
						res, err := long.TryAcquire(ctx, "other")
						return err == nil && res.Acquired
					}, 10*time.Second, 5*time.Millisecond, "the handed lease lapses, and another holder takes the unit")
					require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
					// The waiter, continued, tries again and queues behind the
					// other holder. (Were it to return instead, its line below
					// shows the other holder beside it.)
					for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && r.Client.ZCard(ctx, queue).Val() == 0; {
						time.Sleep(time.Millisecond)
					}
					require.NoError(t, long.Release(ctx, "other"))

					fields := strings.Fields(child.Await(t, "acquired: ", 10*time.Second))
					require.Len(t, fields, 3, child.Transcript())
					assert.Equal(t, fields[0], fields[1], "the leases held as the waiter's Acquire returned: its own alone\n%s", child.Transcript())
					assert.Equal(t, "false", fields[2], "the waiter's Lease is not lost\n%s", child.Transcript())
					return true
				}() {
					return
				}
				t.Logf("attempt %d: the waiter's own try took what the release handed it", attempt)
				require.Less(t, attempt, 5, "the waiter's own try took the hand-off every time")
			}
		})
	}
}

func handOffStoppedChild(t *testing.T) {
	ctx, client, key, limit, _, replicas := procChildSetup(t)
	l := newLimiterOn(t, client, slotlimit.Config{Key: key, Limit: limit, TTL: handOffTTL,
		Replicas: replicas, ReplicaTimeout: 10 * time.Second})
	var once sync.Once
	waitqueue.Taking = func() {
		once.Do(func() {
			fmt.Println("taking")
			redistest.StopSelf()
		})
	}
	fmt.Println("waiting")
	x, err := l.AcquireLease(ctx, 1)
	require.NoError(t, err)
	holders, err := l.Holders(ctx)
	require.NoError(t, err)
	ids := make([]string, len(holders))
	for i, h := range holders {
		ids[i] = h.ID
	}
	lost := false
	select {
	case <-x.Lost():
		lost = true
	default:
	}
	fmt.Printf("acquired: %s %s %t\n", x.Holder(), strings.Join(ids, ","), lost)
	x.Release(ctx) //nolint:errcheck // the lease lapses by itself
}
