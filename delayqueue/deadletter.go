package delayqueue

import (
	"context"
	"strings"

	"github.com/slotlimit/slotlimit/internal/script"
)

// DeadLetters returns up to n of the queue's dead letters, oldest first:
// messages whose MaxAttempts-th delivery lapsed or was given back. Each
// has its ID and Payload, Attempt the deliveries it had, and DueAt when
// it was dead-lettered; Deadline is zero. It writes nothing. n must be
// from 1 to MaxBatch, or it returns ErrInvalidArgument with nothing sent.
func (q *Queue) DeadLetters(ctx context.Context, n int) ([]Message, error) {
	if err := q.usable(ctx); err != nil {
		return nil, err
	}
	if n < 1 || n > MaxBatch {
		return nil, q.refuse("dead letters", invalidArgument("n is %d, must be from 1 to %d", n, MaxBatch))
	}
	reply, err := q.run(ctx, "dead letters", deadScript, n)
	if err != nil {
		return nil, err
	}
	dead, err := decodeDead(reply)
	if err != nil {
		return nil, q.refuse("dead letters", err)
	}
	return dead, nil
}

// Requeue moves the dead letters among ids back to the queue, due now,
// their attempts counted from 0 again, and wakes one waiting consumer. It
// returns how many of ids are requeued: those it moved, and those a
// Requeue moved before that are not delivered yet, so that a call that
// go-redis sends again after its reply was lost, or a repeat, counts what
// the first moved, and moves nothing twice: after an error matching
// ErrOutcomeUnknown, call it again with the same ids. The others are left
// alone. It refuses more than MaxBatch ids with ErrInvalidArgument.
func (q *Queue) Requeue(ctx context.Context, ids ...string) (int, error) {
	return q.deadOp(ctx, "Requeue", requeueScript, []any{q.notify}, ids)
}

// Drop deletes the dead letters among ids for good, and returns how many
// of ids were dead letters. It refuses more than MaxBatch ids with
// ErrInvalidArgument. A call that go-redis sends again after its reply was
// lost, or a repeat after an error matching ErrOutcomeUnknown, deletes
// nothing more, and counts only the ids that are still dead letters when
// it runs: it may report fewer than were deleted, never more, and deletes
// nothing but dead letters.
func (q *Queue) Drop(ctx context.Context, ids ...string) (int, error) {
	return q.deadOp(ctx, "Drop", dropScript, nil, ids)
}

// deadOp runs a script that takes ids after args and returns a count.
func (q *Queue) deadOp(ctx context.Context, method string, s *script.Script, args []any, ids []string) (int, error) {
	op := strings.ToLower(method)
	if err := q.usable(ctx); err != nil {
		return 0, err
	}
	if len(ids) > MaxBatch {
		return 0, q.refuse(op, invalidArgument("%d ids, above MaxBatch %d", len(ids), MaxBatch))
	}
	if len(ids) == 0 {
		return 0, nil
	}
	for _, id := range ids {
		args = append(args, id)
	}
	c := q.begin(method, "", int64(len(ids)))
	reply, err := q.run(ctx, op, s, args...)
	n := 0
	if err == nil {
		if n, err = decodeCount(reply, len(ids)); err != nil {
			err = q.refuse(op, err)
		}
	}
	if err != nil {
		c.Failed(ctx, err)
		return 0, err
	}
	c.Done(ctx)
	return n, nil
}
