package script

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
)

// A Runner runs scripts that write, and follows the server through the
// changes a call can meet (see tries): a Cluster's slot that moved or is
// moving, a failover, a server loading its data. With Replicas above 0, a
// write counts only once that many replicas have it: each call, or each
// pipeline of calls, is followed by WAIT, which counts the replicas that
// have the connection's own writes, and one they do not acknowledge within
// ReplicaTimeout fails with an error that wraps NotReplicated.
//
// Every error a Runner returns tells callerr.OutcomeUnknown whether the
// call may have written.
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

// Run runs s once with keys and args: EVALSHA, then EVAL on NOSCRIPT, as
// s.Run does, sent again (see tries) until it runs, it fails in a way no
// new try can mend, or ctx ends. With Replicas it is a Pipeline of the
// one call; without, go-redis picks the node, and on a Cluster follows
// MOVED and ASK itself before a try is counted. The Cmd it returns
// carries the error, if any.
func (r *Runner) Run(ctx context.Context, s *Script, keys []string, args ...any) *redis.Cmd {
	if r.Replicas > 0 {
		cmds, err := r.Pipeline(ctx, s, keys, [][]any{args})
		if err != nil {
			cmd := redis.NewCmd(ctx)
			cmd.SetErr(err)
			return cmd
		}
		return cmds[0]
	}
	var t tries
	eval, maybe := false, false
	for {
		cmd := s.cmd(ctx, eval, keys, args)
		_ = r.Client.Process(ctx, once{cmd})
		err := cmd.Err()
		switch {
		case err == nil || err == redis.Nil:
			return cmd
		case !eval && isNoScript(err):
			eval = true
			continue
		}
		maybe = maybe || mayHaveWritten(err)
		if !t.again(ctx, r.Client, err) {
			if callerr.OutcomeUnknown(err) != maybe {
				cmd.SetErr(callerr.Sent(err, maybe))
			}
			return cmd
		}
	}
}

// Pipeline runs s once per entry of calls (its arguments), in one round
// trip to the master of keys (on Redis Cluster, the master of keys[0]'s
// slot), and returns a Cmd per call. With Replicas, the pipeline ends
// with WAIT.
//
// A pipeline has no NOSCRIPT fallback, so, as s.Run does for one call,
// Pipeline sends again with EVAL, which carries the script's source, just
// the calls that met NOSCRIPT (they did not run), in order. EVAL cannot
// meet NOSCRIPT, so however often the script cache is flushed, every call
// runs, and none runs twice. Calls that a Cluster redirected, or that met
// a state a new try can mend (see tries), are sent again the same way,
// to the node the Cluster names.
//
// An error reply stays with its call's Cmd. The error returned is the
// connection's, or one that wraps NotReplicated, or WAIT's own error
// reply after the calls ran (UNBLOCKED, on a failover), which leaves
// their outcome unknown; the Cmds are then nil.
func (r *Runner) Pipeline(ctx context.Context, s *Script, keys []string, calls [][]any) ([]*redis.Cmd, error) {
	cmds := make([]*redis.Cmd, len(calls))
	eval := make([]bool, len(calls))
	err := r.send(ctx, keys[0], len(calls), func(do func(*redis.Cmd), i int) {
		cmds[i] = s.cmd(ctx, eval[i], keys, calls[i])
		do(cmds[i])
	}, func(i int) bool {
		if !eval[i] && isNoScript(cmds[i].Err()) {
			eval[i] = true
			return true
		}
		return false
	}, nil)
	if err != nil {
		return nil, err
	}
	return cmds, nil
}

// Tx sends the commands that build queues with do, such as MULTI ...
// EXEC, as one unit in one round trip to the master of key, ended by WAIT
// with Replicas, and sends them again as Pipeline does a call while a
// Cluster redirects them or a new try can mend what they met. The Cmds do
// returns hold the replies of the last try, and Tx returns the first
// error among them, as a pipeline does, or the connection's. WAIT's reply
// counts only when wrote, called once the unit ran, reports that it
// wrote.
func (r *Runner) Tx(ctx context.Context, key string, build func(do func(args ...any) *redis.Cmd), wrote func() bool) error {
	var cmds []*redis.Cmd
	err := r.send(ctx, key, 1, func(queue func(*redis.Cmd), _ int) {
		cmds = cmds[:0]
		build(func(args ...any) *redis.Cmd {
			cmd := redis.NewCmd(ctx, args...)
			cmds = append(cmds, cmd)
			queue(cmd)
			return cmd
		})
	}, nil, func(int) bool { return wrote() })
	if err != nil {
		return err
	}
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil && err != redis.Nil {
			return err
		}
	}
	return nil
}

// acknowledged checks the reply of the WAIT that followed writes that
// ran: WAIT's error reply, or fewer replicas than Replicas, leave it open
// whether the writes outlive a failover.
func (r *Runner) acknowledged(wait *redis.IntCmd) error {
	acked, err := wait.Result()
	if err != nil {
		return callerr.Sent(fmt.Errorf("wait: %w", err), true)
	}
	if acked < int64(r.Replicas) {
		return callerr.Sent(fmt.Errorf("%w: %d of %d", r.NotReplicated, acked, r.Replicas), true)
	}
	return nil
}
