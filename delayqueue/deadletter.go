package delayqueue

import (
	"context"

	"github.com/slotlimit/slotlimit/internal/script"
)

// DeadLetters returns up to n of the queue's dead letters, oldest first:
// messages whose MaxAttempts-th delivery lapsed or was given back. Each
// has its ID and Payload, Attempt the deliveries it had, and DueAt when
// it was dead-lettered; Deadline is zero. It writes nothing. n must be
// from 1 to MaxBatch, or it returns ErrInvalidArgument with nothing sent.
func (q *Queue) DeadLetters(ctx context.Context, n int) ([]Message, error) {
	if err := q.check(ctx, "DeadLetters"); err != nil {
		return nil, err
	}
	if n < 1 || n > MaxBatch {
		return nil, q.refuse("DeadLetters", errs.Argument("n is %d, must be from 1 to %d", n, MaxBatch))
	}
	r, err := q.run(ctx, "DeadLetters", deadScript, n)
	if err != nil {
		return nil, err
	}
	dead, err := decodeDead(r)
	if err != nil {
		return nil, q.refuse("DeadLetters", err)
	}
	return dead, nil
}

// Requeue moves the dead letters among ids back to the queue, due now,
// their attempts counted from 0 again, leaves the other ids alone, and
// returns how many of ids are requeued: moved now, or by an earlier
// Requeue and not delivered since. So a call made again, or sent again,
// counts what the first moved and moves nothing twice. It refuses more
// than MaxBatch ids with ErrInvalidArgument.
func (q *Queue) Requeue(ctx context.Context, ids ...string) (int, error) {
	if err := q.check(ctx, "Requeue"); err != nil {
		return 0, err
	}
	return q.deadOp(ctx, "Requeue", requeueScript, q.notify, ids)
}

// Drop deletes the dead letters among ids for good, leaves the other ids
// alone, and returns how many of ids were dead letters. A call made
// again, or sent again, deletes nothing more, and counts only what is
// still there: fewer than were deleted, never more. It refuses more than
// MaxBatch ids with ErrInvalidArgument.
func (q *Queue) Drop(ctx context.Context, ids ...string) (int, error) {
	return q.deadOp(ctx, "Drop", dropScript, nil, ids)
}

// deadOp runs s, requeue.lua or drop.lua, with first (if not nil) and
// ids, for method, and returns its count.
func (q *Queue) deadOp(ctx context.Context, method string, s *script.Script, first any, ids []string) (int, error) {
	if err := q.check(ctx, method); err != nil {
		return 0, err
	}
	if len(ids) > MaxBatch {
		return 0, q.refuse(method, errs.Argument("%d ids, above MaxBatch %d", len(ids), MaxBatch))
	}
	if len(ids) == 0 {
		return 0, nil
	}
	c := q.base.Begin(method, q.base.Key, "", int64(len(ids)), 0)
	r, err := q.run(ctx, method, s, idArgs(first, ids)...)
	n := 0
	if err == nil {
		if n, err = decodeCount(r, len(ids)); err != nil {
			err = q.refuse(method, err)
		}
	}
	if err != nil {
		c.Failed(ctx, err)
		return 0, err
	}
	c.Done(ctx)
	return n, nil
}
