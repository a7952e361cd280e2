package slotlimit

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/observe"
	"github.com/slotlimit/slotlimit/internal/script"
)

// batchSize is the most holders one script call of a batch takes, so that
// a huge batch does not hold the server for long at a stretch.
const batchSize = 1000

// TryAcquireBatch runs TryAcquire for each holder, in order, in one round
// trip: the results are exactly those of the same calls made one by one.
// An invalid holder fails the whole batch with ErrInvalidHolder, and
// nothing is sent. As with TryAcquire, a batch sent again, or after an
// error matching ErrOutcomeUnknown, takes each holder's units once.
//
// Config.Observer is told of each holder's outcome, as its TryAcquire
// would report it, with Op "TryAcquireBatch"; a batch that fails after
// it was sent reports one Error, for no holder.
func (l *Limiter) TryAcquireBatch(ctx context.Context, holders []string) ([]Result, error) {
	return runBatch(ctx, l, "TryAcquireBatch", holders, l.tryAcquireBatch,
		func(ctx context.Context, one observe.Call, res Result) { observeResult(ctx, &one, res, nil) })
}

func (l *Limiter) tryAcquireBatch(ctx context.Context, method string, holders []string) ([]Result, error) {
	call := l.acquireCall(1, false)
	if len(holders) > 0 && l.checkHolders(method, holders) == nil {
		l.writeRecord(ctx)
	}
	cmds, err := l.batch(ctx, method, call.script, call.keys, holders, func(chunk ...string) []any {
		return l.acquireCall(1, false, chunk...).args
	})
	if err != nil {
		return nil, err
	}
	attempts := make([]attempt, 0, len(holders))
	for _, cmd := range cmds {
		reply, err := cmd.Result()
		if err != nil {
			return nil, errs.Call(ctx, method, l.cfg.Key, err)
		}
		want := min(len(holders)-len(attempts), batchSize)
		if attempts, err = l.decodeAcquire(attempts, reply, call, want); err != nil {
			return nil, errs.Op(method, l.cfg.Key, err)
		}
	}
	results := make([]Result, len(attempts))
	for i, a := range attempts {
		results[i] = a.res
	}
	return results, nil
}

// ReleaseBatch runs Release for each holder, in order, in one round trip,
// and reports for each whether it held a live lease. Like TryAcquireBatch,
// it checks every holder first and sends nothing if one is invalid. A
// ReleaseBatch sent again frees each lease once, and reports false for
// the holders its first run freed.
//
// Config.Observer is told of each holder's release, as its Release would
// report it, with Op "ReleaseBatch"; a batch that fails after it was
// sent reports one Error, for no holder.
func (l *Limiter) ReleaseBatch(ctx context.Context, holders []string) ([]bool, error) {
	return runBatch(ctx, l, "ReleaseBatch", holders, l.releaseBatch,
		func(ctx context.Context, one observe.Call, released bool) { one.Released(ctx, released) })
}

func (l *Limiter) releaseBatch(ctx context.Context, method string, holders []string) ([]bool, error) {
	cmds, err := l.batch(ctx, method, releaseScript, l.keys, holders, l.releaseArgs)
	if err != nil {
		return nil, err
	}
	released := make([]bool, 0, len(holders))
	for _, cmd := range cmds {
		reply, err := cmd.Result()
		if err != nil {
			return nil, errs.Call(ctx, method, l.cfg.Key, err)
		}
		if released, err = decodeReleased(released, reply); err != nil {
			return nil, errs.Op(method, l.cfg.Key, err)
		}
	}
	if len(released) != len(holders) {
		return nil, errs.Op(method, l.cfg.Key, callerr.UnexpectedReply(released))
	}
	return released, nil
}

// runBatch makes the batch call method of l on holders with run, and
// tells the Observer of each holder's outcome with report, or of the
// batch's error once it was sent.
func runBatch[T any](ctx context.Context, l *Limiter, method string, holders []string,
	run func(ctx context.Context, method string, holders []string) ([]T, error),
	report func(ctx context.Context, one observe.Call, out T)) ([]T, error) {
	if err := l.usable(ctx, method); err != nil {
		return nil, err
	}
	c := l.base.Begin(method, l.cfg.Key, "", int64(len(holders)), l.cfg.Limit)
	out, err := run(ctx, method, holders)
	switch {
	case !c.On():
	case err != nil:
		if !sentNothing(err) {
			c.Failed(ctx, err)
		}
	default:
		for i, h := range holders {
			report(ctx, c.For(h, 1), out[i])
		}
	}
	return out, err
}

// checkHolders returns the error of a batch call of method with holders,
// or nil when every holder is valid.
func (l *Limiter) checkHolders(method string, holders []string) error {
	for _, holder := range holders {
		if err := checkHolder(holder); err != nil {
			return errs.Op(method, l.cfg.Key, err)
		}
	}
	return nil
}

// batch checks every holder, then runs s on them in chunks of up to
// batchSize, one call per chunk, in one pipeline (see script.Runner.Pipeline).
func (l *Limiter) batch(ctx context.Context, method string, s *script.Script, keys, holders []string, args func(...string) []any) ([]*redis.Cmd, error) {
	if err := l.checkHolders(method, holders); err != nil {
		return nil, err
	}
	if len(holders) == 0 {
		return nil, nil
	}
	var calls [][]any
	for start := 0; start < len(holders); start += batchSize {
		calls = append(calls, args(holders[start:min(start+batchSize, len(holders))]...))
	}
	cmds, err := l.base.Runner.Pipeline(ctx, s, keys, calls)
	if err != nil {
		return nil, errs.Call(ctx, method, l.cfg.Key, err)
	}
	return cmds, nil
}
