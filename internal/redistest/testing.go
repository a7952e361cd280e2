package redistest

import (
	"os"
	"sync"
	"testing"

	"github.com/slotlimit/slotlimit/internal/skipnote"
)

var shared struct {
	mu     sync.Mutex // guards the lazy start of the shared cluster
	once   sync.Once
	server *Server
	addr   string
	err    error
}

// Addr returns the address of a real Redis for tb: the one named by
// SLOTLIMIT_REDIS_ADDR, or else a server started once per test binary and
// shared by its tests, which must use keys of their own. When neither is
// to be had, Addr skips tb with a message that says so, or fails it when
// SLOTLIMIT_REQUIRE_REDIS=1.
func Addr(tb testing.TB) string {
	tb.Helper()
	shared.once.Do(func() {
		if addr := os.Getenv(AddrEnv); addr != "" {
			shared.addr = addr
			return
		}
		shared.server, shared.err = Start()
		if shared.err == nil {
			shared.addr = shared.server.Addr
		}
	})
	if shared.err != nil {
		Unavailable(tb, shared.err)
	}
	return shared.addr
}

// Unavailable skips tb because a real Redis could not be had, or fails it
// when SLOTLIMIT_REQUIRE_REDIS=1.
func Unavailable(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv(RequireEnv) == "1" {
		tb.Fatalf("real Redis required (%s=1) but unavailable: %v", RequireEnv, err)
	}
	skipnote.Skip(tb, "real Redis", err, "install redis-server or set "+AddrEnv)
}

// Shutdown stops the shared server and cluster, if they were started, and
// reports in one line the tests skipped for want of a server, even
// without -v. Call it from TestMain after m.Run.
func Shutdown() {
	skipnote.Report()
	if shared.server != nil {
		shared.server.Close()
	}
	if sharedCluster.cluster != nil {
		sharedCluster.cluster.Close()
	}
}
