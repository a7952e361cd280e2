package script

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Runner runs scripts that write. With Replicas above 0, a write counts
// only once that many replicas have it: each call, or each pipeline of
// calls, is followed by WAIT, which counts the replicas that have the
// connection's own writes, and one they do not acknowledge within
// ReplicaTimeout fails with an error that wraps NotReplicated.
//
// A Runner is safe for concurrent use, as long as its fields are not
// changed.
type Runner struct {
	Client redis.UniversalClient

	// Replicas is the number of replicas that must acknowledge a write;
	// 0 leaves replication asynchronous and sends no WAIT.
	Replicas int

	// ReplicaTimeout bounds each WAIT; 0 waits for ever, as WAIT does.
	ReplicaTimeout time.Duration

	// NotReplicated is the error that the error of a write the replicas
	// did not acknowledge wraps, so that each package reports its own
	// sentinel; it must be set when Replicas is above 0.
	NotReplicated error
}

// Run runs s once with keys and args. Without Replicas it is s.Run:
// EVALSHA, then EVAL on NOSCRIPT. With Replicas it is a Pipeline of the
// one call, whose error, if any, the Cmd it returns carries.
func (r *Runner) Run(ctx context.Context, s *Script, keys []string, args ...any) *redis.Cmd {
	if r.Replicas == 0 {
		return s.Run(ctx, r.Client, keys, args...)
	}
	cmds, err := r.Pipeline(ctx, s, keys, [][]any{args})
	if err != nil {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(err)
		return cmd
	}
	return cmds[0]
}

// Pipeline runs s once per entry of calls (its arguments), in order, in
// one round trip to the master of keys (on Redis Cluster, the master of
// keys[0]'s slot), and returns a Cmd per call. With Replicas, the
// pipeline ends with WAIT.
//
// A pipeline has no NOSCRIPT fallback, so, as s.Run does for one call,
// Pipeline sends again with EVAL, which carries the script's source, just
// the calls that met NOSCRIPT (they did not run), in order. EVAL cannot
// meet NOSCRIPT, so however often the script cache is flushed, every call
// runs, and none runs twice.
//
// An error reply stays with its call's Cmd. The error returned is the
// connection's, or one that wraps NotReplicated; the Cmds are then nil.
func (r *Runner) Pipeline(ctx context.Context, s *Script, keys []string, calls [][]any) ([]*redis.Cmd, error) {
	var conn redis.Cmdable = r.Client
	if cluster, ok := r.Client.(*redis.ClusterClient); ok {
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
			if r.Replicas > 0 {
				waits = append(waits, p.Do(ctx, "wait", r.Replicas, r.ReplicaTimeout.Milliseconds()))
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
	if err := send(all, s.EvalSha); err != nil {
		return nil, err
	}
	var again []int
	for i, cmd := range cmds {
		if isNoScript(cmd.Err()) {
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		if err := send(again, s.Eval); err != nil {
			return nil, err
		}
	}
	for _, wait := range waits {
		acked, err := wait.Int64()
		if err != nil {
			return nil, err
		}
		if acked < int64(r.Replicas) {
			return nil, fmt.Errorf("%w: %d of %d", r.NotReplicated, acked, r.Replicas)
		}
	}
	return cmds, nil
}

func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
