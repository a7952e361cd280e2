package redistest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/loopback"
)

// replicaSyncTimeout bounds how long StartReplicated waits for the replica
// to follow the master.
const replicaSyncTimeout = 10 * time.Second

// syncKey is the key StartReplicated writes and deletes to see that the
// replica acknowledges the master's writes.
const syncKey = "redistest:replicated"

// StartServer starts a redis-server of tb's own on a free loopback port,
// with extra configuration args, and stops it when tb ends. Unlike the
// shared server of Addr, tb may kill or restart it. When it cannot be
// started, StartServer skips tb, or fails it when SLOTLIMIT_REQUIRE_REDIS=1.
func StartServer(tb testing.TB, args ...string) *Server {
	tb.Helper()
	s, err := Start(args...)
	if err != nil {
		Unavailable(tb, err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Replicated is a master and one replica that follows it, each a server
// of the test's own (see StartServer), with a client of each.
type Replicated struct {
	Master        *Server       // the master, which the test may kill
	Replica       *Server       // the replica, which the test may kill
	Client        *redis.Client // a client of the master
	ReplicaClient *redis.Client // a client of the replica
}

// StartReplicated starts a master and a replica, and waits until the
// replica follows the master and acknowledges its writes, so that a WAIT
// for one replica succeeds at once. (A replica that has just synced is
// sent the master's writes only once it has acknowledged the sync, which
// it does within a second.) The master has no keys. Both servers are
// stopped, and both clients closed, when tb ends. It skips or fails tb as
// StartServer does.
func StartReplicated(tb testing.TB) *Replicated {
	tb.Helper()
	r := &Replicated{
		Master:  StartServer(tb, "--repl-diskless-sync-delay", "0"),
		Replica: StartServer(tb),
	}
	r.Client = redis.NewClient(&redis.Options{Addr: r.Master.Addr})
	tb.Cleanup(func() { r.Client.Close() })
	r.ReplicaClient = redis.NewClient(&redis.Options{Addr: r.Replica.Addr})
	tb.Cleanup(func() { r.ReplicaClient.Close() })
	r.Follow(tb, r.Master.Addr)

	ctx, cancel := context.WithTimeout(context.Background(), replicaSyncTimeout)
	defer cancel()
	for {
		// A write that leaves no key, and a WAIT for it.
		var wait *redis.Cmd
		_, err := r.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, syncKey, "1", 0)
			p.Del(ctx, syncKey)
			wait = p.Do(ctx, "wait", 1, 100)
			return nil
		})
		if n, _ := wait.Int64(); err == nil && n >= 1 {
			return r
		}
		if err != nil {
			time.Sleep(20 * time.Millisecond)
		}
		if ctx.Err() != nil {
			master, _ := r.Client.Info(context.Background(), "replication").Result()
			replica, _ := r.ReplicaClient.Info(context.Background(), "replication").Result()
			tb.Fatalf("redistest: the replica on %s did not acknowledge the master on %s within %v\nmaster:\n%s\nreplica:\n%s",
				r.Replica.Addr, r.Master.Addr, replicaSyncTimeout, master, replica)
		}
	}
}

// Follow makes the replica follow the server at addr (REPLICAOF). It does
// not wait for the replica to catch up.
func (r *Replicated) Follow(tb testing.TB, addr string) {
	tb.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		tb.Fatalf("redistest: follow %q: %v", addr, err)
	}
	if err := r.ReplicaClient.ReplicaOf(context.Background(), host, port).Err(); err != nil {
		tb.Fatalf("redistest: replica on %s follow %s: %v", r.Replica.Addr, addr, err)
	}
}

// CutOff cuts the replica off from its master, as a broken link would: it
// makes the replica follow a loopback port where nothing listens. The
// replica keeps the data it had and serves reads; it receives no write the
// master takes after CutOff returns, and acknowledges none to WAIT.
func (r *Replicated) CutOff(tb testing.TB) {
	tb.Helper()
	addr, err := loopback.FreeAddr()
	if err != nil {
		tb.Fatalf("redistest: cut off the replica: %v", err)
	}
	r.Follow(tb, addr)
}
