package slotlimit_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// A hook turns a function into a go-redis hook that sees each command a
// client sends, and may answer in its place. Pipelines pass untouched.
type hook func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error

func (f hook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (f hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { return f(ctx, cmd, next) }
}

// scriptOp names the library's script that cmd runs, told apart by its
// numbers of keys and arguments, and for six keys by ARGV[4], a release's
// notice command; "" for a command that runs no script.
func scriptOp(cmd redis.Cmder) string {
	if name := cmd.Name(); name != "evalsha" && name != "eval" {
		return ""
	}
	args := cmd.Args()
	keys, _ := strconv.Atoi(fmt.Sprint(args[2]))
	argv := args[3+keys:]
	switch {
	case keys == 3 && len(argv) >= 4:
		return "acquire"
	case keys == 6 && len(argv) >= 3:
		// release.lua's first argument is 'limit:fair:claim:command:channel'.
		if strings.Count(fmt.Sprint(argv[0]), ":") >= 4 {
			return "release"
		}
		return "acquire"
	case keys == 3 && len(argv) == 2:
		return "renew"
	case keys == 2 && len(argv) == 2:
		return "claim"
	case keys == 2 && len(argv) == 0:
		return "read" // count or holders
	case keys == 1 && len(argv) == 2:
		return "counter acquire"
	case keys == 1 && len(argv) == 0:
		return "counter release"
	}
	return "script"
}

// ran reports whether a script call reached the server: a NOSCRIPT reply
// is answered by go-redis with EVAL, which is the call that counts.
func ran(err error) bool {
	return err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// scriptCounts counts the library's script calls that ran, by operation.
type scriptCounts struct {
	mu sync.Mutex
	n  map[string]int64
}

func (c *scriptCounts) hook() hook {
	return func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		err := next(ctx, cmd)
		if op := scriptOp(cmd); op != "" && ran(err) {
			c.mu.Lock()
			c.n[op]++
			c.mu.Unlock()
		}
		return err
	}
}

func (c *scriptCounts) get(op string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[op]
}

// countedClient returns a new client to b's server whose script calls are
// counted.
func countedClient(t *testing.T, b *backend) (redis.UniversalClient, *scriptCounts) {
	client := newClient(t, b)
	counts := &scriptCounts{n: map[string]int64{}}
	client.AddHook(counts.hook())
	return client, counts
}

// failAfterSend lets the next script call that runs, once armed, do so on
// the server and then reports fault() instead of its reply, as a
// connection that breaks after the call was sent would.
// noRetries leaves a client no try to send a call again after a lost
// reply, so that a fault failAfterSend injects is the call's last word.
func noRetries(o *redis.UniversalOptions) {
	o.MaxRetries, o.MaxRedirects = -1, -1
}

func failAfterSend(armed *atomic.Bool, fault func() error) hook {
	return func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		err := next(ctx, cmd)
		if err == nil && scriptOp(cmd) != "" && armed.CompareAndSwap(true, false) {
			err = fault()
			cmd.SetErr(err)
		}
		return err
	}
}
