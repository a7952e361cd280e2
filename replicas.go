package slotlimit

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ErrNotReplicated is returned when Config.Replicas is set and fewer
// replicas than that acknowledged a write within Config.ReplicaTimeout.
// The write was made on the master, and may be lost if it fails over now:
// a lease taken that way counts as not taken (AcquireN releases it; a
// caller of TryAcquire should Release or try again), and a release or
// renewal may have to be repeated.
var ErrNotReplicated = errors.New("slotlimit: write not acknowledged by enough replicas")

// runWrite runs a script that writes. With Config.Replicas set, it sends
// WAIT right after the script on the same connection (WAIT counts the
// replicas that have the connection's own writes), in one pipeline to the
// master of the keys; a pipeline has no NOSCRIPT fallback, so that is
// handled here.
func (s *slots) runWrite(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	if s.cfg.Replicas == 0 {
		return script.Run(ctx, s.client, keys, args...)
	}
	var conn redis.Cmdable = s.client
	if cluster, ok := s.client.(*redis.ClusterClient); ok {
		master, err := cluster.MasterForKey(ctx, keys[0])
		if err != nil {
			cmd := redis.NewCmd(ctx)
			cmd.SetErr(err)
			return cmd
		}
		conn = master
	}
	var cmd *redis.Cmd
	var wait *redis.Cmd
	send := func(load bool) {
		conn.Pipelined(ctx, func(p redis.Pipeliner) error { //nolint:errcheck // the commands carry their errors
			if load {
				cmd = script.Eval(ctx, p, keys, args...)
			} else {
				cmd = script.EvalSha(ctx, p, keys, args...)
			}
			wait = p.Do(ctx, "wait", s.cfg.Replicas, s.cfg.ReplicaTimeout.Milliseconds())
			return nil
		})
	}
	send(false)
	if isNoScript(cmd.Err()) {
		send(true)
	}
	if cmd.Err() != nil {
		return cmd
	}
	if acked, err := wait.Int64(); err != nil {
		cmd.SetErr(err)
	} else if acked < int64(s.cfg.Replicas) {
		cmd.SetErr(fmt.Errorf("%w: %d of %d", ErrNotReplicated, acked, s.cfg.Replicas))
	}
	return cmd
}
