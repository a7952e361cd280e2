package redistest

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Gate holds a client's script calls (EVALSHA and EVAL) before they are
// sent, until the test lets them go, so that a test can line calls up
// behind one in flight. A call whose ctx ends while held returns
// ctx.Err(), unsent.
type Gate struct {
	entered chan struct{}
	pass    chan struct{}
	open    chan struct{}
	once    sync.Once
}

// HoldScripts makes every script call of client wait at a new Gate, and
// opens it when the test ends.
func HoldScripts(t testing.TB, client redis.UniversalClient) *Gate {
	g := &Gate{entered: make(chan struct{}, 1000), pass: make(chan struct{}, 1000), open: make(chan struct{})}
	client.AddHook(g)
	t.Cleanup(g.Open)
	return g
}

// Entered waits until a script call has reached the gate, and fails the
// test if none does within a generous bound.
func (g *Gate) Entered(t testing.TB) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("no script call reached the gate")
	}
}

// Pass lets one held script call go.
func (g *Gate) Pass() { g.pass <- struct{}{} }

// Open lets every script call go, now and from now on.
func (g *Gate) Open() { g.once.Do(func() { close(g.open) }) }

func (g *Gate) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (g *Gate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := strings.ToLower(cmd.Name()); name == "evalsha" || name == "eval" {
			select {
			case <-g.open:
			default:
				g.entered <- struct{}{}
				select {
				case <-g.pass:
				case <-g.open:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		return next(ctx, cmd)
	}
}

func (g *Gate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
