//go:build linux

package lock_test

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

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
	"github.com/slotlimit/slotlimit/lock"
)

// The environment of a waiter stopped across its hand-off, beside
// childKeyEnv and childTTLEnv.
const (
	childReplicasEnv = "SLOTLIMIT_LOCK_REPLICAS" // the waiter's Config.Replicas
)

// handOffStops are the points where a waiter is stopped across the
// hand-off that serves it: as it takes a notice it trusts, before its
// claim (the claim then finds another owner, or with no Replicas there is
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

// A waiter stopped (SIGSTOP) across the hand-off of a lock of handOffTTL, after
// it read the notice and judged it in time, is continued once the handed
// lock has lapsed and another owner holds it. With or without Replicas,
// it must not return as the owner: it keeps waiting, and returns once the
// other unlocks, with a higher fence, the key holding its own token, and
// its Lock not lost (no claim was sent behind a hand-off it did not
// return with).
func TestStoppedAcrossHandOffNeverReturnsALapsedLock(t *testing.T) {
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
					key := "lock-test:stopped-across-hand-off"
					// A claim that met NOSCRIPT would run again after the WAIT.
					require.NoError(t, lock.LoadScripts(ctx, r.Client))
					// The parent's owners send no WAIT, which the paused replica
					// would hold up.
					m := newMutexOn(t, r.Client, lock.Config{Key: key, TTL: 10 * time.Second})
					owner, err := m.TryLock(ctx)
					require.NoError(t, err)

					child := redistest.StartChild(t, redistest.Target{Addrs: []string{r.Master.Addr}},
						"TestStoppedAcrossHandOffNeverReturnsALapsedLock", "hand-off-stopped",
						childKeyEnv+"="+key, childTTLEnv+"="+handOffTTL.String(),
						childReplicasEnv+"="+strconv.Itoa(stop.replicas))
					pid := child.Cmd.Process.Pid
					defer syscall.Kill(pid, syscall.SIGCONT) //nolint:errcheck // it may run, or have exited
					child.Await(t, "waiting", 10*time.Second)
					queue, channel := lock.SideKey(key, "q"), lock.Channel(key)
					require.Eventually(t, func() bool {
						return r.Client.ZCard(ctx, queue).Val() == 1 && r.Client.PubSubNumSub(ctx, channel).Val()[channel] == 1
					}, 10*time.Second, time.Millisecond, "the waiter queues and subscribes")

					require.NoError(t, owner.Unlock(ctx)) // handed to the waiter, for its lease, handOffTTL
					if first, _ := child.AwaitFirst(t, 10*time.Second, "taking", "locked: "); first != "taking" {
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
					var other *lock.Lock
					require.Eventually(t, func() bool {
						other, err = m.TryLock(ctx)
						return err == nil
					}, 10*time.Second, 5*time.Millisecond, "the handed lock lapses, and another owner takes it")
					require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
					// The waiter, continued, tries again and queues behind the
					// other owner. (Were it to return instead, its line below shows
					// the other's token.)
					for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && r.Client.ZCard(ctx, queue).Val() == 0; {
						time.Sleep(time.Millisecond)
					}
					require.NoError(t, other.Unlock(ctx))

					fields := strings.Fields(child.Await(t, "locked: ", 10*time.Second))
					require.Len(t, fields, 4, child.Transcript())
					fence, err := strconv.ParseInt(fields[0], 10, 64)
					require.NoError(t, err)
					assert.Equal(t, fields[1], fields[2], "the key held the waiter's token as its Lock returned\n%s", child.Transcript())
					assert.Greater(t, fence, other.Fence(), "the waiter's fence is above the owner's that came between\n%s", child.Transcript())
					assert.Equal(t, "false", fields[3], "the waiter's Lock is not lost\n%s", child.Transcript())
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
	ttl, err := time.ParseDuration(os.Getenv(childTTLEnv))
	require.NoError(t, err)
	replicas, err := strconv.Atoi(os.Getenv(childReplicasEnv))
	require.NoError(t, err)
	key := os.Getenv(childKeyEnv)
	m := newMutexOn(t, client, lock.Config{Key: key, TTL: ttl, Replicas: replicas, ReplicaTimeout: 10 * time.Second})
	var once sync.Once
	waitqueue.Taking = func() {
		once.Do(func() {
			fmt.Println("taking")
			redistest.StopSelf()
		})
	}
	fmt.Println("waiting")
	l, err := m.Lock(ctx)
	require.NoError(t, err)
	holder := client.Get(ctx, key).Val()
	lost := false
	select {
	case <-l.Lost():
		lost = true
	default:
	}
	fmt.Printf("locked: %d %s %s %t\n", l.Fence(), l.Token(), strings.TrimSuffix(holder, "+"), lost)
	l.Unlock(ctx) //nolint:errcheck // the lease lapses by itself
}
