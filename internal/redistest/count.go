package redistest

import (
	"context"
	"net"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// A CommandCounter is a go-redis hook that counts the connections a
// client dials and the commands it sends, each command of a pipeline
// counted, so that a test can show that a call sent nothing.
type CommandCounter struct{ dials, commands atomic.Int64 }

// Commands returns how many commands the client has sent.
func (c *CommandCounter) Commands() int64 { return c.commands.Load() }

// Dials returns how many connections the client has dialled.
func (c *CommandCounter) Dials() int64 { return c.dials.Load() }

func (c *CommandCounter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c.dials.Add(1)
		return next(ctx, network, addr)
	}
}

func (c *CommandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.commands.Add(1)
		return next(ctx, cmd)
	}
}

func (c *CommandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.commands.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}
