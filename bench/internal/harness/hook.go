package harness

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// A CommandCounter is a go-redis hook that counts the commands a client
// sends, pipelined ones included, its round trips, and the commands the
// server runs at top level, by name. It is safe for concurrent use.
type CommandCounter struct {
	sent     atomic.Int64
	trips    atomic.Int64
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
		c.sent.Add(1)
		c.countTopLevel(cmd.Name())
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (c *CommandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.trips.Add(1)
		queued := false
		for _, cmd := range cmds {
			c.sent.Add(1)
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
		return next(ctx, cmds)
	}
}
