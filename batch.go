package slotlimit

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
)

// batchSize is the most holders one script call of a batch takes, so that
// a huge batch does not hold the server for long at a stretch.
const batchSize = 1000

// TryAcquireBatch runs TryAcquire for each holder, in order, in one round
// trip, as a burst of device reports would: the results are exactly those
// of the same calls made one by one, in the same order. The holders go to
// the server in script calls of up to 1,000 holders each, sent together,
// so a batch costs the server far less than its calls made one by one.
// Every holder is checked first; an invalid one fails the whole batch with
// ErrInvalidHolder and nothing is sent. With Config.Replicas, the batch
// waits for the replicas once, after its last call.
//
// An error from the connection fails the batch and leaves each call's
// outcome unknown; as with TryAcquire, trying again or releasing the
// holders is safe.
func (l *Limiter) TryAcquireBatch(ctx context.Context, holders []string) ([]Result, error) {
	if err := l.usable(); err != nil {
		return nil, err
	}
	keys, _ := l.acquireCall(1, false)
	cmds, err := l.batch(ctx, "acquire", acquireScript, keys, holders, func(chunk ...string) []any {
		_, args := l.acquireCall(1, false, chunk...)
		return args
	})
	if err != nil {
		return nil, err
	}
	results := make([]Result, 0, len(holders))
	for _, cmd := range cmds {
		reply, err := cmd.Result()
		if err != nil {
			return nil, callError(ctx, "acquire", l.cfg.Key, err)
		}
		if results, err = l.appendResults(results, reply, len(holders)-len(results)); err != nil {
			return nil, opError("acquire", l.cfg.Key, err)
		}
	}
	return results, nil
}

// appendResults appends the results in reply, an acquire script's reply
// for the next chunk of a batch of which left holders are left.
func (l *Limiter) appendResults(results []Result, reply any, left int) ([]Result, error) {
	if min(left, batchSize) == 1 {
		res, _, err := l.result(reply, 1)
		return append(results, res), err
	}
	r, ok := reply.([]any)
	if ok && len(r) == 1+2*min(left, batchSize) {
		v := make([]int64, len(r))
		if int64s(v, r) {
			for i := 1; i < len(v); i += 2 {
				results = append(results, l.outcome(v[0], v[i], v[i+1], 1))
			}
			return results, nil
		}
	}
	return results, callerr.UnexpectedReply(reply)
}

// ReleaseBatch runs Release for each holder, in order, in one round trip,
// and reports for each whether it held a live lease. Like TryAcquireBatch,
// it sends the holders in script calls of up to 1,000, and checks every
// holder first and sends nothing if one is invalid.
func (l *Limiter) ReleaseBatch(ctx context.Context, holders []string) ([]bool, error) {
	if err := l.usable(); err != nil {
		return nil, err
	}
	cmds, err := l.batch(ctx, "release", releaseScript, l.keys, holders, l.releaseArgs)
	if err != nil {
		return nil, err
	}
	released := make([]bool, 0, len(holders))
	for _, cmd := range cmds {
		reply, err := cmd.Result()
		if err != nil {
			return nil, callError(ctx, "release", l.cfg.Key, err)
		}
		switch r := reply.(type) {
		case int64:
			released = append(released, r == 1)
		case []any:
			for _, x := range r {
				released = append(released, x == int64(1))
			}
		default:
			return nil, opError("release", l.cfg.Key, callerr.UnexpectedReply(reply))
		}
	}
	if len(released) != len(holders) {
		return nil, opError("release", l.cfg.Key, callerr.UnexpectedReply(released))
	}
	return released, nil
}

// batch checks every holder, then runs s on them in chunks of up to
// batchSize, one call per chunk, in one pipeline (see script.Runner.Pipeline).
func (l *Limiter) batch(ctx context.Context, op string, s *script.Script, keys, holders []string, args func(...string) []any) ([]*redis.Cmd, error) {
	for _, holder := range holders {
		if err := checkHolder(holder); err != nil {
			return nil, err
		}
	}
	if len(holders) == 0 {
		return nil, nil
	}
	var calls [][]any
	for start := 0; start < len(holders); start += batchSize {
		calls = append(calls, args(holders[start:min(start+batchSize, len(holders))]...))
	}
	cmds, err := l.runner.Pipeline(ctx, s, keys, calls)
	if err != nil {
		return nil, callError(ctx, op, l.cfg.Key, err)
	}
	return cmds, nil
}
