package lock_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// The environment a child reads, beside redistest's.
const (
	childKeyEnv = "SLOTLIMIT_LOCK_KEY" // the lock's key
	childTTLEnv = "SLOTLIMIT_LOCK_TTL" // the lock's TTL
)

const childDoneLine = "lock-child-done: "

// crossProcess runs test on a real Redis and a real Cluster, whose
// addresses children can reach.
func crossProcess(t *testing.T, test func(t *testing.T, b *redistest.Backend)) {
	t.Run("redis", func(t *testing.T) { test(t, redistest.Redis(t)) })
	t.Run("cluster", func(t *testing.T) { test(t, redistest.RedisCluster(t)) })
}

func startLockChild(t *testing.T, b *redistest.Backend, test, role, key string, ttl time.Duration) *redistest.Child {
	return redistest.StartChild(t, b.Target(), test, role, childKeyEnv+"="+key, childTTLEnv+"="+ttl.String())
}

func childMutex(t *testing.T, pool int) (context.Context, redis.UniversalClient, *lock.Mutex) {
	ctx, client := redistest.ChildSetup(t, pool)
	ttl, err := time.ParseDuration(os.Getenv(childTTLEnv))
	require.NoError(t, err)
	return ctx, client, newMutexOn(t, client, lock.Config{Key: os.Getenv(childKeyEnv), TTL: ttl})
}

const (
	exclusionChildren   = 4
	exclusionGoroutines = 50
	exclusionRounds     = 4 // each goroutine's turns
)

// Mutual exclusion under load: 4 processes of 50 goroutines each take the
// lock in turns. Inside, a gauge in Redis shared by every process, and one
// in each process, must read exactly 1; and a fenced store, which keeps
// the highest fence it has accepted, accepts every owner's write, since
// fences grow with every owner.
func TestMutualExclusionAcrossProcesses(t *testing.T) {
	if redistest.ChildRole() == "contender" {
		contenderChild(t)
		return
	}
	crossProcess(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		key := b.Key(t, "lock-test:")
		// The gauge and the store share the lock's hash slot.
		t.Cleanup(func() { b.Client.Del(ctx, "{"+key+"}/gauge", "{"+key+"}/store") })
		children := make([]*redistest.Child, exclusionChildren)
		for i := range children {
			children[i] = startLockChild(t, b, "TestMutualExclusionAcrossProcesses", "contender", key, 5*time.Second)
		}
		total := 0
		for _, c := range children {
			fields := strings.Fields(c.Await(t, childDoneLine, 50*time.Second))
			require.Len(t, fields, 3, c.Transcript())
			turns, _ := strconv.Atoi(fields[0])
			assert.Equal(t, "0", fields[1], "Redis gauge above 1\n%s", c.Transcript())
			assert.Equal(t, "0", fields[2], "stale fence accepted, or local gauge above 1\n%s", c.Transcript())
			total += turns
		}
		assert.Equal(t, exclusionChildren*exclusionGoroutines*exclusionRounds, total, "every turn was taken")
	})
}

// fencedStore accepts a write only with a fence above the highest it has
// accepted, as storage guarded by fencing tokens does.
var fencedStore = redis.NewScript(`
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) <= last then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', 60000)
return 1`)

func contenderChild(t *testing.T) {
	ctx, client, m := childMutex(t, exclusionGoroutines+8)
	key := m.Config().Key
	gauge, store := "{"+key+"}/gauge", "{"+key+"}/store"
	var local, turns, overlaps, rejected atomic.Int64
	var wg sync.WaitGroup
	for range exclusionGoroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range exclusionRounds {
				l, err := m.Lock(ctx)
				if err != nil {
					fmt.Println("lock error:", err)
					return
				}
				if local.Add(1) != 1 {
					rejected.Add(1)
				}
				if client.Incr(ctx, gauge).Val() != 1 {
					overlaps.Add(1)
				}
				if fencedStore.Run(ctx, client, []string{store}, l.Fence()).Val() != int64(1) {
					rejected.Add(1)
				}
				client.Decr(ctx, gauge)
				local.Add(-1)
				turns.Add(1)
				if err := l.Unlock(ctx); err != nil {
					fmt.Println("unlock error:", err)
				}
			}
		}()
	}
	wg.Wait()
	fmt.Printf("%s%d %d %d\n", childDoneLine, turns.Load(), overlaps.Load(), rejected.Load())
}

// kill -9 of an owner that keeps its lock alive: the lock is free once
// the lease of its last renewal lapses, and a waiter takes it then, not
// before, by the server's clock. How long after the kill is logged: a
// busy machine stretches it.
func TestKilledOwnerFreesLock(t *testing.T) {
	if redistest.ChildRole() == "owner" {
		ownerChild(t)
		return
	}
	crossProcess(t, func(t *testing.T, b *redistest.Backend) {
		const ttl = 2 * time.Second
		key := b.Key(t, "lock-test:")
		owner := startLockChild(t, b, "TestKilledOwnerFreesLock", "owner", key, ttl)
		token := owner.Await(t, "locked: ", 10*time.Second)
		waitServerPast(t, b, expireTime(t, b, key), 10*time.Second) // kept alive past its first TTL
		ctx := context.Background()
		require.Equal(t, token, b.Client.Get(ctx, key).Val(), "kept alive")

		m := newMutexOn(t, b.Client, lock.Config{Key: key, TTL: ttl})
		require.NoError(t, owner.Cmd.Process.Kill())
		killed := time.Now()
		// The last renewal's deadline; one the dead owner had in flight can
		// only have moved it later.
		last := expireTime(t, b, key)
		wctx, cancel := context.WithTimeout(ctx, ttl+10*time.Second) // a bound for gross failures
		defer cancel()
		l, err := m.Lock(wctx)
		require.NoError(t, err)
		took := time.Since(killed)
		taken := expireTime(t, b, key).Add(-ttl) // the take, a TTL before its deadline
		assert.False(t, taken.Before(last), "taken at %v, before the killed owner's lease lapsed at %v", taken, last)
		t.Logf("%s: taken %v after the kill, TTL %v", b.Name, took.Round(time.Millisecond), ttl)
		require.NoError(t, l.Unlock(ctx))
	})
}

func ownerChild(t *testing.T) {
	ctx, _, m := childMutex(t, 4)
	l, err := m.TryLock(ctx)
	require.NoError(t, err)
	work := l.KeepAlive(ctx)
	fmt.Println("locked: " + l.Token())
	<-work.Done()
}
