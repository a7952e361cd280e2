package recent_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
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
	"github.com/slotlimit/slotlimit/recent"
)

const (
	childKeyEnv    = "SLOTLIMIT_RECENT_KEY" // the list's key
	childDoneLine  = "recent-child-done: "
	loadChildren   = 4
	loadGoroutines = 50
	loadAdds       = 20 // each goroutine's Adds, of two values each
	loadMax        = 50 // the list's Max
)

// 4 processes of 50 goroutines each add distinct items, two per Add, to
// one list, on a real Redis and a Cluster. The order the server ran them
// in is read from MONITOR on the key's master, which shows each script's
// ZADD: the final list is exactly the Max newest of them, newest first,
// and a reader running meanwhile never sees more than Max items, neither
// through Items nor in the sorted set itself.
func TestLoadAcrossProcesses(t *testing.T) {
	if redistest.ChildRole() == "adder" {
		adderChild(t)
		return
	}
	for _, backend := range []func(*testing.T) *redistest.Backend{redistest.Redis, redistest.RedisCluster} {
		b := backend(t)
		t.Run(b.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			key := b.Key(t, "recent-test:")
			l := newListOn(t, b.Client, recent.Config{Key: key, Max: loadMax})
			zadds := monitorZAdds(t, ctx, b, recent.DataKey(l))

			children := make([]*redistest.Child, loadChildren)
			for i := range children {
				children[i] = redistest.StartChild(t, b.Target(), "TestLoadAcrossProcesses", "adder", childKeyEnv+"="+key)
			}
			done := make(chan struct{})
			var reads, mostSeen atomic.Int64
			var readErr atomic.Value
			var readers sync.WaitGroup
			for range 4 {
				readers.Add(1)
				go func() {
					defer readers.Done()
					for {
						select {
						case <-done:
							return
						default:
						}
						items, err := l.Items(ctx, 0, loadMax)
						if err != nil {
							readErr.Store(err)
							return
						}
						card := b.Client.ZCard(ctx, recent.DataKey(l)).Val()
						for seen := max(int64(len(items)), card); seen > mostSeen.Load() && !mostSeen.CompareAndSwap(mostSeen.Load(), seen); {
						}
						reads.Add(1)
					}
				}()
			}
			for _, c := range children {
				assert.Equal(t, "0", c.Await(t, childDoneLine, 50*time.Second), "failed Adds\n%s", c.Transcript())
			}
			close(done)
			readers.Wait()
			assert.Nil(t, readErr.Load(), "reader error")
			assert.LessOrEqual(t, mostSeen.Load(), int64(loadMax), "a reader saw more than Max")
			assert.Positive(t, reads.Load())

			order, scripts := zadds(2 * loadChildren * loadGoroutines * loadAdds)
			require.Len(t, order, 2*loadChildren*loadGoroutines*loadAdds, "every value's ZADD was seen")
			t.Logf("%d Adds in %d scripts", loadChildren*loadGoroutines*loadAdds, scripts)
			want := order[len(order)-loadMax:]
			for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
				want[i], want[j] = want[j], want[i]
			}
			items, err := l.Items(ctx, 0, loadMax)
			require.NoError(t, err)
			var got []string
			for i, it := range items {
				got = append(got, it.Value)
				if i > 0 {
					assert.False(t, it.At.After(items[i-1].At), "item %d is newer than the one before it", i)
				}
			}
			assert.Equal(t, want, got, "exactly the Max newest, by the server's order")
			t.Logf("%d reads during the load", reads.Load())
		})
	}
}

// monitorZAdds runs MONITOR on the master of key and returns a function
// that waits until the ZADDs of key seen have added n members (or ctx
// ends), and returns those members in the order the server ran them,
// each script's in the order of its arguments, and the number of scripts
// that ran them (Adds sent together run as one). It checks that the
// scores strictly grow.
func monitorZAdds(t *testing.T, ctx context.Context, b *redistest.Backend, key string) func(n int) ([]string, int) {
	addr := b.Opts.Addrs[0]
	if cluster, ok := b.Client.(*redis.ClusterClient); ok {
		master, err := cluster.MasterForKey(ctx, key)
		require.NoError(t, err)
		addr = master.Options().Addr
	}
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = conn.Write([]byte("MONITOR\r\n"))
	require.NoError(t, err)
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "+OK\r\n", line)

	var mu sync.Mutex
	var members []string
	var scripts int
	lastScore := -1.0
	prefix := `[0 lua] "ZADD" "` + key + `" `
	go func() {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			_, rest, ok := strings.Cut(line, prefix)
			if !ok {
				continue
			}
			fields := strings.Fields(strings.TrimSpace(rest))
			mu.Lock()
			scripts++
			for i := 0; i+1 < len(fields); i += 2 {
				score, err := strconv.ParseFloat(strings.Trim(fields[i], `"`), 64)
				if err != nil || score <= lastScore {
					t.Errorf("score %s after %v", fields[i], lastScore)
				}
				lastScore = score
				members = append(members, strings.Trim(fields[i+1], `"`))
			}
			mu.Unlock()
		}
	}()
	return func(n int) ([]string, int) {
		for {
			mu.Lock()
			if len(members) >= n || ctx.Err() != nil {
				defer mu.Unlock()
				return append([]string(nil), members...), scripts
			}
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func adderChild(t *testing.T) {
	ctx, client := redistest.ChildSetup(t, loadGoroutines+8)
	l := newListOn(t, client, recent.Config{Key: os.Getenv(childKeyEnv), Max: loadMax})
	var failed atomic.Int64
	var wg sync.WaitGroup
	for g := range loadGoroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range loadAdds {
				v := fmt.Sprintf("p%d-g%d-%d", os.Getpid(), g, i)
				if err := l.Add(ctx, v+"a", v+"b"); err != nil {
					fmt.Println("add error:", err)
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	fmt.Printf("%s%d\n", childDoneLine, failed.Load())
}
