package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/skipnote"
)

// OwnCluster starts a Cluster for tb alone, closed when tb ends, for a
// test that changes its shape: a failover, a slot moved. When none can be
// started it skips tb, or fails it when SLOTLIMIT_REQUIRE_REDIS=1.
func OwnCluster(tb testing.TB) *Cluster {
	tb.Helper()
	c, err := StartCluster()
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatalf("real Redis Cluster required (%s=1) but unavailable: %v", RequireEnv, err)
		}
		skipnote.Skip(tb, "Redis Cluster", err, "install redis-server")
	}
	tb.Cleanup(c.Close)
	c.settle(tb)
	return c
}

// settle waits until every node of c sees each master that serves slots
// with a replica (see settled).
func (c *Cluster) settle(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		all := true
		for _, s := range c.Nodes {
			if !c.settled(ctx, s) {
				all = false
				break
			}
		}
		if all {
			return
		}
		if ctx.Err() != nil {
			tb.Fatal("redistest: the cluster's nodes do not settle")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Client returns a cluster client of c, closed when tb ends, its options
// changed by tweaks.
func (c *Cluster) Client(tb testing.TB, tweaks ...func(*redis.ClusterOptions)) *redis.ClusterClient {
	opts := &redis.ClusterOptions{Addrs: c.Addrs()}
	for _, tweak := range tweaks {
		tweak(opts)
	}
	client := redis.NewClusterClient(opts)
	tb.Cleanup(func() { client.Close() })
	return client
}

// Stop stops the server's process (SIGSTOP): it keeps its connections
// and answers nothing until Continue, as a server that hangs.
func (s *Server) Stop() error { return s.signal(syscall.SIGSTOP) }

// Continue continues a server that Stop stopped.
func (s *Server) Continue() error { return s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) error {
	if s.cmd == nil || s.cmd.Process == nil {
		return fmt.Errorf("redistest: server %s is not running", s.Addr)
	}
	return s.cmd.Process.Signal(sig)
}

// A clusterNode is a node as CLUSTER NODES describes it.
type clusterNode struct {
	id, addr, master string // master: the id of a replica's master, "" for a master
	slots            []string
}

// nodes reads CLUSTER NODES from the first node of c that answers,
// skipping the servers in skip.
func (c *Cluster) nodes(ctx context.Context, skip ...*Server) ([]clusterNode, error) {
	var lastErr error
	for _, s := range c.Nodes {
		if contains(skip, s) {
			continue
		}
		client := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, ReadTimeout: time.Second})
		text, err := client.ClusterNodes(ctx).Result()
		client.Close()
		if err != nil {
			lastErr = err
			continue
		}
		var nodes []clusterNode
		for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
			f := strings.Fields(line)
			if len(f) < 8 {
				continue
			}
			n := clusterNode{id: f[0], addr: strings.Split(f[1], "@")[0]}
			if strings.Contains(f[2], "slave") {
				n.master = f[3]
			}
			n.slots = f[8:]
			nodes = append(nodes, n)
		}
		return nodes, nil
	}
	return nil, fmt.Errorf("redistest: no cluster node answers: %v", lastErr)
}

func contains(servers []*Server, s *Server) bool {
	for _, x := range servers {
		if x == s {
			return true
		}
	}
	return false
}

// server returns c's Server at addr.
func (c *Cluster) server(addr string) *Server {
	for _, s := range c.Nodes {
		if s.Addr == addr {
			return s
		}
	}
	return nil
}

// serves reports whether n's slot ranges hold slot.
func (n clusterNode) serves(slot int) bool {
	for _, r := range n.slots {
		if strings.HasPrefix(r, "[") {
			continue // a slot being moved, as "[slot->-id]"
		}
		lo, hi, found := strings.Cut(r, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if found {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 == nil && err2 == nil && a <= slot && slot <= b {
			return true
		}
	}
	return false
}

// Shard returns the master that serves key's slot and its replica, as
// the nodes see them now.
func (c *Cluster) Shard(tb testing.TB, key string) (master, replica *Server) {
	tb.Helper()
	c.settle(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	slot := c.Slot(tb, key)
	nodes, err := c.nodes(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	var masterID string
	for _, n := range nodes {
		if n.master == "" && n.serves(slot) {
			master, masterID = c.server(n.addr), n.id
		}
	}
	for _, n := range nodes {
		if masterID != "" && n.master == masterID {
			replica = c.server(n.addr)
		}
	}
	if master == nil || replica == nil {
		tb.Fatalf("redistest: no master with a replica serves slot %d: %+v", slot, nodes)
	}
	return master, replica
}

// Failover has the replica of key's master take its place, as an
// operator's CLUSTER FAILOVER does: the master stops taking writes, the
// replica catches up with it, then they swap. With takeover, the master
// is stopped first (see Stop), as a master that hangs, and the replica
// takes over at once (CLUSTER FAILOVER TAKEOVER), without the master's
// consent and without catching up; the old master stays stopped until
// the returned function continues it, when it rejoins as a replica.
// Failover returns once every node that answers names the replica as the
// slot's master.
func (c *Cluster) Failover(tb testing.TB, key string, takeover bool) (resume func()) {
	tb.Helper()
	master, replica := c.Shard(tb, key)
	resume = func() {}
	args := []any{"cluster", "failover"}
	if takeover {
		if err := master.Stop(); err != nil {
			tb.Fatal(err)
		}
		continued := false
		resume = func() {
			if !continued {
				continued = true
				master.Continue()
			}
		}
		tb.Cleanup(resume)
		args = append(args, "takeover")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := redis.NewClient(&redis.Options{Addr: replica.Addr, MaxRetries: -1})
	defer client.Close()
	skip := []*Server{}
	if takeover {
		skip = append(skip, master)
	}
	slot := c.Slot(tb, key)
	// The masters vote for one failover of a shard per twice the node
	// timeout, and a manual failover that gets no vote ends by itself:
	// ask again until the replica is master.
	for {
		if err := client.Do(ctx, args...).Err(); err != nil {
			tb.Fatalf("redistest: %v on %s: %v", args, replica.Addr, err)
		}
		try, cancel := context.WithTimeout(ctx, 6*time.Second)
		done := c.agree(try, slot, replica.Addr, skip...)
		cancel()
		if done {
			break
		}
		if ctx.Err() != nil {
			tb.Fatalf("redistest: %s did not take over slot %d", replica.Addr, slot)
		}
	}
	if !takeover {
		c.await(tb, ctx, slot, replica.Addr)
	}
	return resume
}

// MoveSlot moves key's slot from its master to another master while the
// caller's calls run: the slot is marked as moving on both, its keys are
// moved one at a time with pause between them (a call on a key already
// moved meets ASK, one on keys split between the two TRYAGAIN), and the
// slot is then given to the new master on every master. It returns the
// new master, once every node names it.
func (c *Cluster) MoveSlot(tb testing.TB, key string, pause time.Duration) *Server {
	tb.Helper()
	m := c.BeginMove(tb, key)
	for m.MoveKeys(tb, 1) > 0 {
		time.Sleep(pause)
	}
	return m.Finish(tb)
}

// A Move is a slot in the middle of a move from one master to another
// (see BeginMove).
type Move struct {
	c        *Cluster
	slot     int
	src, dst clusterNode
	masters  []clusterNode
}

// BeginMove marks key's slot as moving from its master to another master
// (CLUSTER SETSLOT ... IMPORTING and MIGRATING), and moves no key yet.
func (c *Cluster) BeginMove(tb testing.TB, key string) *Move {
	tb.Helper()
	c.settle(tb)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := &Move{c: c, slot: c.Slot(tb, key)}
	nodes, err := c.nodes(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	for _, n := range nodes {
		if n.master != "" || len(n.slots) == 0 {
			continue
		}
		m.masters = append(m.masters, n)
		if n.serves(m.slot) {
			m.src = n
		} else if m.dst.id == "" {
			m.dst = n
		}
	}
	if m.src.id == "" || m.dst.id == "" {
		tb.Fatalf("redistest: no two masters for slot %d: %+v", m.slot, nodes)
	}
	m.do(tb, ctx, m.dst, "cluster", "setslot", m.slot, "importing", m.src.id)
	m.do(tb, ctx, m.src, "cluster", "setslot", m.slot, "migrating", m.dst.id)
	return m
}

// do sends a command to node n, failing tb if it fails.
func (m *Move) do(tb testing.TB, ctx context.Context, n clusterNode, args ...any) any {
	tb.Helper()
	client := redis.NewClient(&redis.Options{Addr: n.addr, MaxRetries: -1})
	defer client.Close()
	v, err := client.Do(ctx, args...).Result()
	// A key can lapse between listing it and moving it: MIGRATE then
	// answers NOKEY.
	if err != nil && !strings.Contains(err.Error(), "NOKEY") {
		tb.Fatalf("redistest: moving slot %d from %s to %s: %v: %v", m.slot, m.src.addr, m.dst.addr, args, err)
	}
	return v
}

// MoveKeys moves up to n of the slot's keys still on the old master to
// the new one, one at a time, and returns how many it moved.
func (m *Move) MoveKeys(tb testing.TB, n int) int {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	host, port, _ := net.SplitHostPort(m.dst.addr)
	moved := 0
	for ; moved < n; moved++ {
		keys, ok := m.do(tb, ctx, m.src, "cluster", "getkeysinslot", m.slot, 1).([]any)
		if !ok || len(keys) == 0 {
			break
		}
		m.do(tb, ctx, m.src, "migrate", host, port, keys[0], 0, 5000)
	}
	return moved
}

// Finish moves the keys left, gives the slot to the new master on every
// master (the new one first, then the old, as redis-cli's resharding
// does), and returns the new master once every node names it.
func (m *Move) Finish(tb testing.TB) *Server {
	tb.Helper()
	for m.MoveKeys(tb, 100) > 0 {
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m.do(tb, ctx, m.dst, "cluster", "setslot", m.slot, "node", m.dst.id)
	m.do(tb, ctx, m.src, "cluster", "setslot", m.slot, "node", m.dst.id)
	for _, n := range m.masters {
		if n.id != m.src.id && n.id != m.dst.id {
			m.do(tb, ctx, n, "cluster", "setslot", m.slot, "node", m.dst.id)
		}
	}
	m.c.await(tb, ctx, m.slot, m.dst.addr)
	return m.c.server(m.dst.addr)
}

// Slot returns key's hash slot, as CLUSTER KEYSLOT on a node of c gives
// it.
func (c *Cluster) Slot(tb testing.TB, key string) int {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, s := range c.Nodes {
		client := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, ReadTimeout: time.Second})
		slot, err := client.ClusterKeySlot(ctx, key).Result()
		client.Close()
		if err == nil {
			return int(slot)
		}
	}
	tb.Fatalf("redistest: no node gives the slot of %q", key)
	return 0
}

// await waits until every node of c but skip names addr as slot's master
// and reports the cluster ok, and, when no node is skipped, sees every
// master that serves slots with a replica.
func (c *Cluster) await(tb testing.TB, ctx context.Context, slot int, addr string, skip ...*Server) {
	tb.Helper()
	if c.agree(ctx, slot, addr, skip...) {
		return
	}
	var views []string
	for _, s := range c.Nodes {
		client := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, ReadTimeout: time.Second})
		text, err := client.ClusterNodes(context.Background()).Result()
		client.Close()
		views = append(views, fmt.Sprintf("%s: %v\n%s", s.Addr, err, text))
	}
	tb.Fatalf("redistest: the nodes do not agree that %s serves slot %d:\n%s", addr, slot, strings.Join(views, "\n"))
}

// agree is await's wait, which reports whether the nodes agreed before
// ctx ended.
func (c *Cluster) agree(ctx context.Context, slot int, addr string, skip ...*Server) bool {
	for {
		agreed := true
		for _, s := range c.Nodes {
			if contains(skip, s) {
				continue
			}
			if !c.names(ctx, s, slot, addr) || len(skip) == 0 && !c.settled(ctx, s) {
				agreed = false
				break
			}
		}
		if agreed {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// settled reports whether s sees each master that serves slots with a
// replica, and no master without slots.
func (c *Cluster) settled(ctx context.Context, s *Server) bool {
	client := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, ReadTimeout: time.Second})
	defer client.Close()
	text, err := client.ClusterNodes(ctx).Result()
	if err != nil {
		return false
	}
	replicas := map[string]int{}
	var masters []string
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) < 8 || strings.Contains(f[2], "fail"):
			return false
		case strings.Contains(f[2], "slave"):
			replicas[f[3]]++
		case len(f) == 8:
			return false // a master without slots
		default:
			masters = append(masters, f[0])
		}
	}
	for _, m := range masters {
		if replicas[m] == 0 {
			return false
		}
	}
	return len(masters) > 0
}

// names reports whether s names addr as slot's master in CLUSTER SLOTS,
// with its cluster state ok.
func (c *Cluster) names(ctx context.Context, s *Server, slot int, addr string) bool {
	client := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, ReadTimeout: time.Second})
	defer client.Close()
	info, err := client.ClusterInfo(ctx).Result()
	if err != nil || !strings.Contains(info, "cluster_state:ok") {
		return false
	}
	ranges, err := client.ClusterSlots(ctx).Result()
	if err != nil {
		return false
	}
	for _, r := range ranges {
		if r.Start <= slot && slot <= r.End && len(r.Nodes) > 0 {
			return r.Nodes[0].Addr == addr
		}
	}
	return false
}
