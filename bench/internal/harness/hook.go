package harness

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// A CommandCounter is a go-redis hook that counts the commands a client
// sends, pipelined ones included, its round trips, the replies it has
// read, the EVALSHA calls of each script it watches, and the commands the
// server runs at top level, by name. It is safe for concurrent use.
type CommandCounter struct {
	sent     atomic.Int64
	trips    atomic.Int64
	done     atomic.Int64
	scripts  sync.Map // SHA1 -> *atomic.Int64
	topLevel sync.Map // command name -> *atomic.Int64
}

// NewCommandCounter returns a CommandCounter at zero.
func NewCommandCounter() *CommandCounter {
	return &CommandCounter{}
}

// Sent returns the number of commands sent so far.
func (c *CommandCounter) Sent() int64 { return c.sent.Load() }

// Trips returns the number of round trips so far: single commands and
// pipelines.
func (c *CommandCounter) Trips() int64 { return c.trips.Load() }

// Done returns the number of round trips that have returned, with a reply
// or an error. A waiter can watch it to learn that a call it made in
// another goroutine reached the server and came back.
func (c *CommandCounter) Done() int64 { return c.done.Load() }

// Watch starts counting the EVALSHA calls of the script with sha, and
// returns its count so far.
func (c *CommandCounter) Watch(sha string) *atomic.Int64 {
	n, _ := c.scripts.LoadOrStore(sha, new(atomic.Int64))
	return n.(*atomic.Int64)
}

// Script returns the EVALSHA calls of the script with sha since Watch.
func (c *CommandCounter) Script(sha string) int64 {
	if n, ok := c.scripts.Load(sha); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// TopLevel returns the number of commands sent so far that the server
// runs at top level, by name as INFO commandstats spells it ("evalsha",
// "multi"): every command, but those queued between MULTI and EXEC, which
// the server runs within EXEC and counts in EXEC's time.
func (c *CommandCounter) TopLevel() map[string]int64 {
	m := map[string]int64{}
	c.topLevel.Range(func(name, n any) bool {
		m[name.(string)] = n.(*atomic.Int64).Load()
		return true
	})
	return m
}

func (c *CommandCounter) countTopLevel(name string) {
	n, ok := c.topLevel.Load(name)
	if !ok {
		n, _ = c.topLevel.LoadOrStore(name, new(atomic.Int64))
	}
	n.(*atomic.Int64).Add(1)
}

// DialHook implements redis.Hook.
func (c *CommandCounter) DialHook(next redis.DialHook) redis.DialHook {
	return next
}

// ProcessHook implements redis.Hook.
func (c *CommandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.trips.Add(1)
		c.count(cmd)
		c.countTopLevel(cmd.Name())
		err := next(ctx, cmd)
		c.done.Add(1)
		return err
	}
}

// ProcessPipelineHook implements redis.Hook.
func (c *CommandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.trips.Add(1)
		queued := false
		for _, cmd := range cmds {
			c.count(cmd)
			switch name := cmd.Name(); {
			case name == "multi":
				c.countTopLevel(name)
				queued = true
			case name == "exec" || name == "discard":
				c.countTopLevel(name)
				queued = false
			case !queued:
				c.countTopLevel(name)
			}
		}
		err := next(ctx, cmds)
		c.done.Add(1)
		return err
	}
}

func (c *CommandCounter) count(cmd redis.Cmder) {
	c.sent.Add(1)
	args := cmd.Args()
	if len(args) < 2 || args[0] != "evalsha" {
		return
	}
	if sha, ok := args[1].(string); ok {
		if n, ok := c.scripts.Load(sha); ok {
			n.(*atomic.Int64).Add(1)
		}
	}
}
