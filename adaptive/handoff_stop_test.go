//go:build linux

package adaptive_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// The environment of a waiter stopped across its hand-off, beside
// stopKeyEnv.
const (
	stopReplicasEnv = "SLOTLIMIT_ADAPTIVE_REPLICAS" // the waiter's Config.Replicas
)

// handOffStops are the points where a waiter is stopped across the
// hand-off that serves it: as it takes a notice it trusts, before its
// claim (the claim then finds the slot gone, or with no Replicas there is
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
// slot under a lease of handOffTTL, after it read the notice and judged it in
// time, is continued once the handed slot has lapsed and another caller
// took it. With or without Replicas, it must not return as a holder
// beside the other, which would put two slots in a limit of one: it keeps
// waiting, and returns once the other frees the slot, holding it alone.
func TestStoppedAcrossHandOffNeverReturnsALapsedSlot(t *testing.T) {
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
					key := "adaptive-test:stopped-across-hand-off"
					// A claim that met NOSCRIPT would run again after the WAIT.
					require.NoError(t, adaptive.LoadScripts(ctx, r.Client))
					// The parent's callers send no WAIT, which the paused replica
					// would hold up. Their leases are long; the waiter's, which its
					// queue entry records, is handOffTTL.
					owner := newLimiterOn(t, r.Client, adaptive.Config{Key: key, Min: 1, Max: 5, Initial: 1, TTL: 10 * time.Second, Window: time.Minute})
					held, err := owner.TryAcquire(ctx)
					require.NoError(t, err)

					child := redistest.StartChild(t, redistest.Target{Addrs: []string{r.Master.Addr}},
						"TestStoppedAcrossHandOffNeverReturnsALapsedSlot", "hand-off-stopped",
						stopKeyEnv+"="+key, stopReplicasEnv+"="+strconv.Itoa(stop.replicas))
					pid := child.Cmd.Process.Pid
					defer syscall.Kill(pid, syscall.SIGCONT) //nolint:errcheck // it may run, or have exited
					child.Await(t, "waiting", 10*time.Second)
					keys, channel := adaptive.Keys(key)
					queue := keys[2]
					eventually(t, 10*time.Second, func() bool {
						return r.Client.ZCard(ctx, queue).Val() == 1 && r.Client.PubSubNumSub(ctx, channel).Val()[channel] == 1
					}, "the waiter never queued and subscribed")
					require.NoError(t, held.Ignore(ctx)) // handed to the waiter, for its lease, handOffTTL
					if first, _ := child.AwaitFirst(t, 10*time.Second, "taking", "acquired: "); first != "taking" {
						return false
					}
					// The waiter stops itself as it takes the notice, before its
					// claim; with inWait, its claim is sent once the replica is
					// paused, so that the claim's WAIT waits.
					eventually(t, 10*time.Second, func() bool { return redistest.Stopped(pid) }, "the waiter never stopped")
					if stop.inWait {
						replica := redistest.ServerPid(t, ctx, r.ReplicaClient)
						redistest.StopProcess(t, replica)
						defer syscall.Kill(replica, syscall.SIGCONT) //nolint:errcheck // it may run already
						time.Sleep(300 * time.Millisecond)           // a stop stopSelf sees as one
						require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
						eventually(t, 10*time.Second, func() bool { return redistest.BlockedClients(t, ctx, r.Client) == 1 },
							"the waiter's claim never waited for the replica")
						redistest.StopProcess(t, pid)
						require.NoError(t, syscall.Kill(replica, syscall.SIGCONT))
						eventually(t, 10*time.Second, func() bool { return redistest.BlockedClients(t, ctx, r.Client) == 0 },
							"the claim's WAIT was never answered")
					}
					var other *adaptive.Slot
					eventually(t, 10*time.Second, func() bool {
						other, err = owner.TryAcquire(ctx)
						return err == nil
					}, "the handed slot never lapsed for another caller to take")
					require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
					// The waiter, continued, tries again and queues behind the
					// other caller. (Were it to return instead, its line below
					// shows the other's slot beside its own.)
					for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && r.Client.ZCard(ctx, queue).Val() == 0; {
						time.Sleep(time.Millisecond)
					}
					require.NoError(t, other.Ignore(ctx))

					fields := strings.Fields(child.Await(t, "acquired: ", 10*time.Second))
					require.Len(t, fields, 2, child.Transcript())
					assert.Equal(t, fields[0], fields[1], "the slots held as the waiter's Acquire returned: its own alone\n%s", child.Transcript())
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
	ctx, client := redistest.ChildSetup(t, 4)
	replicas, err := strconv.Atoi(os.Getenv(stopReplicasEnv))
	require.NoError(t, err)
	l := newLimiterOn(t, client, adaptive.Config{Key: os.Getenv(stopKeyEnv), Min: 1, Max: 5, Initial: 1,
		TTL: handOffTTL, Window: time.Minute, Replicas: replicas, ReplicaTimeout: 10 * time.Second})
	var once sync.Once
	waitqueue.Taking = func() {
		once.Do(func() {
			fmt.Println("taking")
			redistest.StopSelf()
		})
	}
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
