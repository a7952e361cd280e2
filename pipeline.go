package slotlimit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// pipeline runs script once per entry of calls (its arguments), in order,
// in one round trip to the master of keys. With Config.Replicas set, each
// pipeline ends with WAIT, which counts the replicas that have the
// connection's own writes. A pipeline has no NOSCRIPT fallback, so, as
// redis.Script.Run does for one call, pipeline sends again with EVAL, which
// carries the script's source, just the calls that met NOSCRIPT (they did
// not run), in order. EVAL cannot meet NOSCRIPT, so however often the
// script cache is flushed, every call runs, and none runs twice. An error
// reply stays with its call; the error returned is the connection's, or
// ErrNotReplicated.
func (s *slots) pipeline(ctx context.Context, script *redis.Script, keys []string, calls [][]any) ([]*redis.Cmd, error) {
	var conn redis.Cmdable = s.client
	if cluster, ok := s.client.(*redis.ClusterClient); ok {
		master, err := cluster.MasterForKey(ctx, keys[0])
		if err != nil {
			return nil, err
		}
		conn = master
	}
	cmds := make([]*redis.Cmd, len(calls))
	var waits []*redis.Cmd
	send := func(which []int, run func(context.Context, redis.Scripter, []string, ...any) *redis.Cmd) error {
		_, err := conn.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range which {
				cmds[i] = run(ctx, p, keys, calls[i]...)
			}
			if s.cfg.Replicas > 0 {
				waits = append(waits, p.Do(ctx, "wait", s.cfg.Replicas, s.cfg.ReplicaTimeout.Milliseconds()))
			}
			return nil
		})
		if err != nil && !errors.As(err, new(redis.Error)) {
			return err
		}
		return nil
	}
	all := make([]int, len(calls))
	for i := range all {
		all[i] = i
	}
	if err := send(all, script.EvalSha); err != nil {
		return nil, err
	}
	var again []int
	for i, cmd := range cmds {
		if isNoScript(cmd.Err()) {
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		if err := send(again, script.Eval); err != nil {
			return nil, err
		}
	}
	for _, wait := range waits {
		acked, err := wait.Int64()
		if err != nil {
			return nil, err
		}
		if acked < int64(s.cfg.Replicas) {
			return nil, fmt.Errorf("%w: %d of %d", ErrNotReplicated, acked, s.cfg.Replicas)
		}
	}
	return cmds, nil
}

func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
