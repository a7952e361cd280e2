package delayqueue

import (
	"context"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
)

// Ack removes m's message for good: it is done. It returns an error
// matching ErrNotHeld when m's lease has lapsed (the message is due again,
// or was delivered again) or the message was acked or given back already;
// a zero Message holds nothing. Ack is safe to repeat after an error that
// leaves the outcome unknown: a repeat of one that took effect returns
// ErrNotHeld.
func (q *Queue) Ack(ctx context.Context, m Message) error {
	return q.settle(ctx, "ack", m, ackScript)
}

// Nack gives m's message back, due again after delay on the server's
// clock, for delivery Attempt+1; or, when m was its MaxAttempts-th
// delivery, moves it to the dead letters. A message due at once wakes one
// waiting consumer. It returns ErrNotHeld as Ack does, and an error
// matching ErrInvalidArgument, with nothing sent, for a delay that is
// negative or above MaxDelay.
func (q *Queue) Nack(ctx context.Context, m Message, delay time.Duration) error {
	if err := checkDelay(delay); err != nil {
		return err
	}
	return q.settle(ctx, "nack", m, nackScript, ms(delay), q.max, q.notify)
}

// Extend renews m's lease to Config.Visibility from now, by the server's
// clock. It returns ErrNotHeld as Ack does: a lapsed lease is never
// renewed, since the message may be delivered to another consumer
// already.
func (q *Queue) Extend(ctx context.Context, m Message) error {
	return q.settle(ctx, "extend", m, extendScript, q.vis)
}

// settle runs one of the scripts that act on a delivery, which all return
// 0 when the delivery no longer holds its lease.
func (q *Queue) settle(ctx context.Context, op string, m Message, s *script.Script, args ...any) error {
	if err := q.usable(); err != nil {
		return err
	}
	if m.ID == "" || m.Attempt < 1 {
		return q.fail(ctx, op, ErrNotHeld)
	}
	reply, err := q.run(ctx, op, s, append([]any{m.ID, m.Attempt}, args...)...)
	if err != nil {
		return err
	}
	n, ok := reply.(int64)
	if !ok {
		return q.fail(ctx, op, callerr.UnexpectedReply(reply))
	}
	if n == 0 {
		return q.fail(ctx, op, ErrNotHeld)
	}
	return nil
}
