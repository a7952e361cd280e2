package slotlimit

import (
	"context"

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
	keys, _ := l.acquireCall("", 1, false)
	cmds, err := l.batch(ctx, "acquire", acquireScript, keys, holders, func(holder string) []any {
		_, args := l.acquireCall(holder, 1, false)
		return args
	})
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(cmds))
	for i, cmd := range cmds {
		reply, err := cmd.Result()
		if err != nil {
			return nil, callError(ctx, "acquire", l.cfg.Key, err)
		}
		if results[i], _, err = l.result(reply); err != nil {
			return nil, opError("acquire", l.cfg.Key, err)
		}
	}
	return results, nil
}

// ReleaseBatch runs Release for each holder, in order, in one round trip,
// and reports for each whether it held a live lease. Like TryAcquireBatch,
// it checks every holder first and sends nothing if one is invalid.
func (l *Limiter) ReleaseBatch(ctx context.Context, holders []string) ([]bool, error) {
	cmds, err := l.batch(ctx, "release", releaseScript, l.keys, holders, l.releaseArgs)
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

// batch checks every holder, then runs script once per holder in one
// pipeline (see pipeline).
func (l *Limiter) batch(ctx context.Context, op string, script *redis.Script, keys, holders []string, args func(string) []any) ([]*redis.Cmd, error) {
	for _, holder := range holders {
		if err := checkHolder(holder); err != nil {
			return nil, err
		}
	}
	if len(holders) == 0 {
		return nil, nil
	}
	calls := make([][]any, len(holders))
	for i, holder := range holders {
		calls[i] = args(holder)
	}
	cmds, err := l.pipeline(ctx, script, keys, calls)
	if err != nil {
		return nil, callError(ctx, op, l.cfg.Key, err)
	}
	return cmds, nil
}
