package slotlimit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// TryAcquireBatch runs TryAcquire for each holder, in order, in one round
// trip, as a burst of device reports would: the results are exactly those
// of the same calls made one by one, in the same order. Every holder is
// checked first; an invalid one fails the whole batch with
// ErrInvalidHolder and nothing is sent. With Config.Replicas, the batch
// waits for the replicas once, after its last call.
//
// An error from the connection fails the batch and leaves each call's
// outcome unknown; as with TryAcquire, trying again or releasing the
// holders is safe.
func (l *Limiter) TryAcquireBatch(ctx context.Context, holders []string) ([]Result, error) {
	cmds, err := l.batch(ctx, "acquire", acquireScript, holders, func(holder string) []any {
		return []any{holder, l.limit, l.ttl, "1", l.fair, "0", queueTTLArg}
	})
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(cmds))
	for i, cmd := range cmds {
		reply, err := cmd.Int64Slice()
		if err == nil && len(reply) != 6 {
			err = errUnexpectedReply(reply)
		}
		if err != nil {
			return nil, callError(ctx, "acquire", l.cfg.Key, err)
		}
		results[i] = l.result(reply)
	}
	return results, nil
}

// ReleaseBatch runs Release for each holder, in order, in one round trip,
// and reports for each whether it held a live lease. Like TryAcquireBatch,
// it checks every holder first and sends nothing if one is invalid.
func (l *Limiter) ReleaseBatch(ctx context.Context, holders []string) ([]bool, error) {
	cmds, err := l.batch(ctx, "release", releaseScript, holders, func(holder string) []any {
		return []any{holder, l.limit, l.fair, l.channel, l.notify, queueTTLArg}
	})
	if err != nil {
		return nil, err
	}
	released := make([]bool, len(cmds))
	for i, cmd := range cmds {
		n, err := cmd.Int64()
		if err != nil {
			return nil, callError(ctx, "release", l.cfg.Key, err)
		}
		released[i] = n == 1
	}
	return released, nil
}

// batch runs script once per holder in one pipeline. A pipeline has no
// NOSCRIPT fallback, so when the server lacks the script, batch loads it
// and sends again just the calls that met NOSCRIPT (they did not run), in
// order; a SCRIPT FLUSH halfway through a batch thus runs no call twice.
func (l *Limiter) batch(ctx context.Context, op string, script *redis.Script, holders []string, args func(string) []any) ([]*redis.Cmd, error) {
	for _, holder := range holders {
		if err := checkHolder(holder); err != nil {
			return nil, err
		}
	}
	if len(holders) == 0 {
		return nil, nil
	}
	var conn redis.Cmdable = l.client
	if cluster, ok := l.client.(*redis.ClusterClient); ok {
		master, err := cluster.MasterForKey(ctx, l.cfg.Key)
		if err != nil {
			return nil, callError(ctx, op, l.cfg.Key, err)
		}
		conn = master
	}
	cmds := make([]*redis.Cmd, len(holders))
	var wait *redis.Cmd
	send := func(which []int) error {
		_, err := conn.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range which {
				cmds[i] = script.EvalSha(ctx, p, l.keys, args(holders[i])...)
			}
			if l.cfg.Replicas > 0 {
				wait = p.Do(ctx, "wait", l.cfg.Replicas, l.cfg.ReplicaTimeout.Milliseconds())
			}
			return nil
		})
		if err != nil && !errors.As(err, new(redis.Error)) {
			return callError(ctx, op, l.cfg.Key, err) // a reply error stays with its call
		}
		return nil
	}
	all := make([]int, len(holders))
	for i := range all {
		all[i] = i
	}
	if err := send(all); err != nil {
		return nil, err
	}
	var again []int
	for i, cmd := range cmds {
		if isNoScript(cmd.Err()) {
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		if err := script.Load(ctx, conn).Err(); err != nil {
			return nil, callError(ctx, op, l.cfg.Key, err)
		}
		if err := send(again); err != nil {
			return nil, err
		}
	}
	if wait != nil {
		if acked, err := wait.Int64(); err != nil {
			return nil, callError(ctx, op, l.cfg.Key, err)
		} else if acked < int64(l.cfg.Replicas) {
			return nil, callError(ctx, op, l.cfg.Key, fmt.Errorf("%w: %d of %d", ErrNotReplicated, acked, l.cfg.Replicas))
		}
	}
	return cmds, nil
}

func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// result reads an acquire script's reply.
func (l *Limiter) result(reply []int64) Result {
	res := Result{Acquired: reply[0] == 1, Count: reply[1], Limit: l.cfg.Limit, Weight: reply[4]}
	if res.Acquired {
		res.ExpiresAt = time.UnixMilli(reply[2])
	} else {
		res.RetryAfter = time.Duration(reply[3]) * time.Millisecond
	}
	return res
}
