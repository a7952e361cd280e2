package delayqueue

import (
	"context"
	"time"

	"github.com/slotlimit/slotlimit/internal/script"
)

// Ack removes m's message for good: it is done. It returns an error
// matching ErrNotHeld when m's lease has lapsed or m was given back, and
// one matching ErrInvalidConfig, with nothing sent, for an m not made by
// Poll.
//
// Until m.Deadline, an Ack made again, or sent again by go-redis, answers
// nil as the first did: after an error matching ErrOutcomeUnknown, call
// it again with the same Message. After m.Deadline it returns ErrNotHeld
// though the first took effect, the safe direction; an Extend does not
// move m.Deadline.
func (q *Queue) Ack(ctx context.Context, m Message) error {
	if err := q.checkDelivery(ctx, "Ack", m); err != nil {
		return err
	}
	c := q.base.Begin("Ack", q.base.Key, m.Token, 1, 0)
	res, err := q.sendAck(ctx, m)
	switch {
	case err != nil:
		err = errs.Call(ctx, "Ack", q.base.Key, err)
	case res.err != nil:
		err = errs.Call(ctx, "Ack", q.base.Key, res.err)
	case res.bad != nil:
		err = q.refuse("Ack", res.bad)
	}
	if err != nil {
		c.Failed(ctx, err)
		return err
	}
	c.Released(ctx, res.held)
	if !res.held {
		return q.refuse("Ack", ErrNotHeld)
	}
	return nil
}

// Nack gives m's message back, due again after delay on the server's
// clock, for delivery Attempt+1; or, when m was its MaxAttempts-th
// delivery, makes it a dead letter. It returns errors as Ack does, and
// one matching ErrInvalidArgument, with nothing sent, for a delay that is
// negative or above MaxDelay. Made again, or sent again, it answers as
// Ack does, and gives nothing back twice.
func (q *Queue) Nack(ctx context.Context, m Message, delay time.Duration) error {
	if err := q.check(ctx, "Nack"); err != nil {
		return err
	}
	if err := checkDelay(delay); err != nil {
		return q.refuse("Nack", err)
	}
	if err := q.checkDelivery(ctx, "Nack", m); err != nil {
		return err
	}
	_, err := q.settle(ctx, "Nack", m, nackScript, q.nackArgs(m, delay))
	return err
}

// Extend renews m's lease to Config.Visibility from now, by the server's
// clock, and leaves m as it is. It returns errors as Ack does, but
// ErrNotHeld for any delivery that has ended, even before m.Deadline: a
// lapsed lease is never renewed. Made again, or sent again, it renews the
// lease again, from then.
func (q *Queue) Extend(ctx context.Context, m Message) error {
	_, err := q.extend(ctx, m)
	return err
}

// extend is Extend, and also returns the new deadline.
func (q *Queue) extend(ctx context.Context, m Message) (time.Time, error) {
	if err := q.checkDelivery(ctx, "Extend", m); err != nil {
		return time.Time{}, err
	}
	deadline, err := q.settle(ctx, "Extend", m, extendScript, q.extendArgs(m))
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(deadline), nil
}

// checkDelivery returns the error of a call of method with ctx on m, a
// delivery, before anything is sent; nil when the call may go on.
func (q *Queue) checkDelivery(ctx context.Context, method string, m Message) error {
	if err := q.check(ctx, method); err != nil {
		return err
	}
	if m.ID == "" || m.Token == "" {
		return q.refuse(method, errNotPolled)
	}
	return nil
}

// settle runs s, nack.lua or extend.lua, with args for m's
// delivery, for method, and returns extend's new deadline (ms).
func (q *Queue) settle(ctx context.Context, method string, m Message, s *script.Script, args []any) (int64, error) {
	c := q.base.Begin(method, q.base.Key, m.Token, 1, 0)
	r, err := q.run(ctx, method, s, args...)
	var held bool
	var deadline int64
	if err == nil {
		if held, deadline, err = decodeSettle(r); err != nil {
			err = q.refuse(method, err)
		}
	}
	if err != nil {
		c.Failed(ctx, err)
		return 0, err
	}
	if method == "Extend" {
		c.Renewed(ctx, held)
	} else {
		c.Released(ctx, held)
	}
	if !held {
		return 0, q.refuse(method, ErrNotHeld)
	}
	return deadline, nil
}
