package slotlimit

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// ErrNotReplicated is returned when Config.Replicas is set and fewer
// replicas than that acknowledged a write within Config.ReplicaTimeout.
// The write was made on the master, and may be lost if it fails over now:
// a lease taken that way counts as not taken (AcquireN releases it; a
// caller of TryAcquire should Release or try again), and a release or
// renewal may have to be repeated.
var ErrNotReplicated = errors.New("slotlimit: write not acknowledged by enough replicas")

// runWrite runs a script that writes. With Config.Replicas set, it runs
// it as a pipeline of one call followed by WAIT (see pipeline), so that
// the write is acknowledged by the replicas before it counts.
func (s *slots) runWrite(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	if s.cfg.Replicas == 0 {
		return script.Run(ctx, s.client, keys, args...)
	}
	cmds, err := s.pipeline(ctx, script, keys, [][]any{args})
	if err != nil {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(err)
		return cmd
	}
	return cmds[0]
}
