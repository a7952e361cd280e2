package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/skipnote"
)

// ErrNoCluster is returned by StartCluster when redis-server or redis-cli
// is not on PATH.
var ErrNoCluster = fmt.Errorf("redistest: redis-server and redis-cli are needed for a cluster")

// A Cluster is a Redis Cluster of 3 masters and 3 replicas on loopback.
type Cluster struct {
	Nodes []*Server
}

// Addrs returns the nodes' addresses.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr
	}
	return addrs
}

// Close stops every node and removes their data.
func (c *Cluster) Close() {
	for _, n := range c.Nodes {
		n.Close()
	}
}

// StartCluster starts 6 nodes on free loopback ports, joins them with
// redis-cli --cluster create as 3 masters with a replica each, and waits
// until every slot is served.
func StartCluster() (*Cluster, error) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, ErrNoCluster
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, ErrNoCluster
	}
	c := &Cluster{}
	for i := 0; i < 6; i++ {
		n, err := Start("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000",
			"--repl-diskless-sync-delay", "0")
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Nodes = append(c.Nodes, n)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		c.Close()
		return nil, fmt.Errorf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	if err := c.waitReady(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// waitReady waits until every node reports cluster_state:ok and a cluster
// client can write to keys on every master.
func (c *Cluster) waitReady(ctx context.Context) error {
	for _, n := range c.Nodes {
		client := redis.NewClient(&redis.Options{Addr: n.Addr})
		for {
			info, err := client.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if ctx.Err() != nil {
				client.Close()
				return fmt.Errorf("redistest: cluster node %s not ready: %v", n.Addr, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		client.Close()
	}
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	defer client.Close()
	for {
		// Every master answers, and has its replica online.
		err := client.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			info, err := m.Info(ctx, "replication").Result()
			if err == nil && !strings.Contains(info, "state=online") {
				err = fmt.Errorf("replica of %s not online", m.Options().Addr)
			}
			return err
		})
		if err == nil {
			// One key per master, so that every shard has answered a write.
			for _, key := range []string{"{a}", "{b}", "{c}", "{d}"} {
				if err = client.Set(ctx, key, "1", time.Second).Err(); err != nil {
					break
				}
			}
		}
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("redistest: cluster not ready: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var sharedCluster struct {
	cluster *Cluster
	err     error
	started bool
}

// ClusterAddrs returns the addresses of a cluster started once per test
// binary and shared by its tests, which must use keys of their own. When
// no cluster can be had it skips tb, or fails it when
// SLOTLIMIT_REQUIRE_REDIS=1.
func ClusterAddrs(tb interface {
	Helper()
	Fatalf(string, ...any)
	Skipf(string, ...any)
}) []string {
	tb.Helper()
	shared.mu.Lock()
	if !sharedCluster.started {
		sharedCluster.started = true
		sharedCluster.cluster, sharedCluster.err = StartCluster()
	}
	shared.mu.Unlock()
	if sharedCluster.err != nil {
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatalf("real Redis Cluster required (%s=1) but unavailable: %v", RequireEnv, sharedCluster.err)
		}
		skipnote.Skip(tb, "Redis Cluster", sharedCluster.err, "install redis-server")
	}
	return sharedCluster.cluster.Addrs()
}
