package notice_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/notice"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.Shutdown()
	os.Exit(code)
}

// A backend is a server the tests run against.
type backend struct {
	opts    redis.UniversalOptions
	real    bool // a redis-server, which lists its pub/sub connections
	cluster bool
}

// eachBackend runs test against miniredis, a real Redis and a real Redis
// Cluster.
func eachBackend(t *testing.T, test func(t *testing.T, b backend)) {
	t.Run("miniredis", func(t *testing.T) {
		test(t, backend{opts: redis.UniversalOptions{Addrs: []string{miniredis.RunT(t).Addr()}}})
	})
	eachRealBackend(t, test)
}

// eachRealBackend runs test against a real Redis and a real Redis Cluster.
func eachRealBackend(t *testing.T, test func(t *testing.T, b backend)) {
	t.Run("redis", func(t *testing.T) {
		test(t, backend{opts: redis.UniversalOptions{Addrs: []string{redistest.Addr(t)}}, real: true})
	})
	t.Run("cluster", func(t *testing.T) {
		test(t, backend{opts: redis.UniversalOptions{Addrs: redistest.ClusterAddrs(t)}, real: true, cluster: true})
	})
}

// newClient returns a client of b's server, closed when t ends. On a real
// server its connections carry a name of their own, so that they can be
// told apart from those of other clients.
func (b backend) newClient(t *testing.T) redis.UniversalClient {
	opts := b.opts
	if b.real {
		opts.ClientName = "notice-test-" + randomHex()
	}
	client := redis.NewUniversalClient(&opts)
	t.Cleanup(func() { client.Close() })
	return client
}

// publish sends payload on channel: with SPUBLISH on a cluster, as the
// hub subscribes there with SSUBSCRIBE.
func publish(ctx context.Context, client redis.UniversalClient, channel, payload string) error {
	if _, ok := client.(*redis.ClusterClient); ok {
		return client.SPublish(ctx, channel, payload).Err()
	}
	return client.Publish(ctx, channel, payload).Err()
}

// subscribers returns how many connections subscribe to channel name:
// sharded subscriptions, summed over the nodes, on a cluster.
func (b backend) subscribers(client redis.UniversalClient, name string) (int64, error) {
	ctx := context.Background()
	if !b.cluster {
		n, err := client.PubSubNumSub(ctx, name).Result()
		return n[name], err
	}
	var mu sync.Mutex
	var total int64
	err := client.(*redis.ClusterClient).ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error {
		n, err := node.PubSubShardNumSub(ctx, name).Result()
		mu.Lock()
		total += n[name]
		mu.Unlock()
		return err
	})
	return total, err
}

// eachNode calls fn with client, or with each node of a cluster client.
func eachNode(client redis.UniversalClient, fn func(node redis.UniversalClient) error) error {
	cluster, ok := client.(*redis.ClusterClient)
	if !ok {
		return fn(client)
	}
	return cluster.ForEachShard(context.Background(), func(ctx context.Context, node *redis.Client) error {
		return fn(node)
	})
}

// pubsubConns returns the IDs of the pub/sub connections of client that a
// real server lists, over every node of a cluster.
func pubsubConns(client redis.UniversalClient) ([]string, error) {
	var name string
	switch c := client.(type) {
	case *redis.Client:
		name = c.Options().ClientName
	case *redis.ClusterClient:
		name = c.Options().ClientName
	}
	var mu sync.Mutex
	var ids []string
	err := eachNode(client, func(node redis.UniversalClient) error {
		list, err := node.Do(context.Background(), "client", "list", "type", "pubsub").Text()
		for _, line := range strings.Split(list, "\n") {
			id, _, _ := strings.Cut(strings.TrimPrefix(line, "id="), " ")
			if strings.Contains(line, " name="+name+" ") {
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
			}
		}
		return err
	})
	return ids, err
}

// released waits until r holds no hub for client, no connection
// subscribes to the channels and, on a real server, client has no pub/sub
// connection, and until no more goroutines run than before.
func (b backend) released(t *testing.T, r *notice.Registry, client redis.UniversalClient, before int, channels ...string) {
	t.Helper()
	settle(t, func() error {
		if r.HubOf(client) != nil {
			return errors.New("the client's hub is still in the registry")
		}
		return b.unsubscribed(client, before, channels...)
	})
}

// unsubscribed returns an error unless no connection subscribes to the
// channels, client has no pub/sub connection on a real server, and no
// more goroutines run than before.
func (b backend) unsubscribed(client redis.UniversalClient, before int, channels ...string) error {
	for _, name := range channels {
		if n, err := b.subscribers(client, name); err != nil || n != 0 {
			return fmt.Errorf("channel %s: %d subscribers (%v)", name, n, err)
		}
	}
	if b.real {
		if ids, err := pubsubConns(client); err != nil || len(ids) != 0 {
			return fmt.Errorf("%d pub/sub connections (%v)", len(ids), err)
		}
	}
	if n := goroutines(); n > before {
		return fmt.Errorf("%d goroutines, %d before:\n%s", n, before, stacks())
	}
	return nil
}

// settle waits up to 10 s for cond to return nil, and fails t with its
// last error if it never does.
func settle(t *testing.T, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// goroutines counts the goroutines of the process but those of an
// in-process miniredis, which serve its connections: on a real server it
// is runtime.NumGoroutine().
func goroutines() int {
	n := 0
	for _, g := range strings.Split(stacks(), "\n\n") {
		if !strings.Contains(g, "github.com/alicebob/miniredis") {
			n++
		}
	}
	return n
}

// stacks returns the stacks of every goroutine.
func stacks() string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// randomHex returns 12 random hex digits, for names no other test uses.
func randomHex() string {
	var buf [6]byte
	rand.Read(buf[:])
	return hex.EncodeToString(buf[:])
}
