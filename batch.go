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
//
// Config.Observer is told of each holder's outcome, as its TryAcquire
// would report it, with Op "TryAcquireBatch"; a batch that fails after
// it was sent reports one Error, for no holder.
func (l *Limiter) TryAcquireBatch(ctx context.Context, holders []string) ([]Result, error) {
	if err := l.usable(ctx); err != nil {
		return nil, err
	}
	c := l.begin("TryAcquireBatch", "", int64(len(holders)))
	results, err := l.tryAcquireBatch(ctx, holders)
	switch {
	case !c.On():
	case err != nil:
		if !sentNothing(err) {
			c.Failed(ctx, err)
		}
	default:
		for i, h := range holders {
			one := c.For(h, 1)
			observeResult(ctx, &one, results[i], nil)
		}
	}
	return results, err
}

func (l *Limiter) tryAcquireBatch(ctx context.Context, holders []string) ([]Result, error) {
	call := l.acquireCall(1, false)
	cmds, err := l.batch(ctx, "acquire", call.script, call.keys, holders, func(chunk ...string) []any {
		return l.acquireCall(1, false, chunk...).args
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
		want := min(len(holders)-len(results), batchSize)
		if results, _, err = l.decodeAcquire(results, reply, call, want); err != nil {
			return nil, opError("acquire", l.cfg.Key, err)
		}
	}
	return results, nil
}

// ReleaseBatch runs Release for each holder, in order, in one round trip,
// and reports for each whether it held a live lease. Like TryAcquireBatch,
// it sends the holders in script calls of up to 1,000, and checks every
// holder first and sends nothing if one is invalid. As with Release, a
// batch that the client sends again after its reply was lost frees each
// lease once, and reports false for the holders its first run freed.
//
// Config.Observer is told of each holder's release, as its Release would
// report it, with Op "ReleaseBatch"; a batch that fails after it was
// sent reports one Error, for no holder.
func (l *Limiter) ReleaseBatch(ctx context.Context, holders []string) ([]bool, error) {
	if err := l.usable(ctx); err != nil {
		return nil, err
	}
	c := l.begin("ReleaseBatch", "", int64(len(holders)))
	released, err := l.releaseBatch(ctx, holders)
	switch {
	case !c.On():
	case err != nil:
		if !sentNothing(err) {
			c.Failed(ctx, err)
		}
	default:
		for i, h := range holders {
			one := c.For(h, 1)
			one.Released(ctx, released[i])
		}
	}
	return released, err
}

func (l *Limiter) releaseBatch(ctx context.Context, holders []string) ([]bool, error) {
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
		if released, err = decodeReleased(released, reply); err != nil {
			return nil, opError("release", l.cfg.Key, err)
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
