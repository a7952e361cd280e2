package delayqueue

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/slotlimit/slotlimit/internal/script"
)

// Ack removes m's message for good: it is done. It returns an error
// matching ErrNotHeld when m's lease has lapsed (the message is due again,
// or was delivered again) or m was given back; a Message without an ID or
// a Token holds nothing.
//
// Ack is safe to send again, and to repeat: until m.Deadline, an Ack
// whose message is gone finds that this delivery's holder removed it (no
// one else could end a lease that has not lapsed), and returns nil as its
// first run did. So a call that go-redis sends again after its reply was
// lost, or a repeat after an error matching ErrOutcomeUnknown, answers
// nil when the first one took effect: after such an error, call it again
// with the same Message. After m.Deadline it returns
// ErrNotHeld, though the first run took effect: the safe direction, as
// the message is gone either way. m.Deadline is the one Poll gave; an
// Extend does not move it, so that past it a repeat is ErrNotHeld too.
func (q *Queue) Ack(ctx context.Context, m Message) error {
	_, err := q.settle(ctx, "Ack", m, ackScript, deadlineArg(m))
	return err
}

// Nack gives m's message back, due again after delay on the server's
// clock, for delivery Attempt+1; or, when m was its MaxAttempts-th
// delivery, moves it to the dead letters. A message due at once wakes one
// waiting consumer. It returns ErrNotHeld as Ack does, and an error
// matching ErrInvalidArgument, with nothing sent, for a delay that is
// negative or above MaxDelay.
//
// Nack is safe to send again, as Ack is: until m.Deadline, a Nack whose
// delivery has ended finds that its holder ended it, and returns nil
// without giving the message back again (so a Nack after an Ack of the
// same delivery returns nil too, and does nothing); after m.Deadline it
// returns ErrNotHeld. After an error matching ErrOutcomeUnknown, call it
// again with the same arguments.
func (q *Queue) Nack(ctx context.Context, m Message, delay time.Duration) error {
	if err := checkDelay(delay); err != nil {
		return q.refuse("nack", err)
	}
	_, err := q.settle(ctx, "Nack", m, nackScript, deadlineArg(m), ms(delay), q.max, q.notify)
	return err
}

// Extend renews m's lease to Config.Visibility from now, by the server's
// clock. It returns ErrNotHeld as Ack does, but for any delivery that has
// ended, even before m.Deadline: a lapsed lease is never renewed, since
// the message may be delivered to another consumer already. A call that
// go-redis sends again renews the lease again, to Visibility from then,
// and so does a call made again after an error matching
// ErrOutcomeUnknown: call it again with the same Message. m is not
// changed: m.Deadline stays the one Poll gave.
func (q *Queue) Extend(ctx context.Context, m Message) error {
	_, err := q.extend(ctx, m)
	return err
}

// extend is Extend, and also returns the new deadline.
func (q *Queue) extend(ctx context.Context, m Message) (time.Time, error) {
	deadline, err := q.settle(ctx, "Extend", m, extendScript, q.vis)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(deadline), nil
}

// deadlineArg is m's lease deadline as the scripts take it: ms on the
// server's clock, 0 when unknown.
func deadlineArg(m Message) string {
	if m.Deadline.IsZero() || m.Deadline.After(maxAt) {
		return "0"
	}
	return strconv.FormatInt(max(m.Deadline.UnixMilli(), 0), 10)
}

// settle runs one of the scripts that act on a delivery, for the method
// named method (Ack, Nack or Extend), which all take its id and token
// first and return 0 when the delivery no longer holds its lease; it
// returns the script's reply otherwise.
func (q *Queue) settle(ctx context.Context, method string, m Message, s *script.Script, args ...any) (int64, error) {
	op := strings.ToLower(method)
	if err := q.usable(ctx); err != nil {
		return 0, err
	}
	if m.ID == "" || m.Token == "" {
		return 0, q.refuse(op, ErrNotHeld)
	}
	c := q.begin(method, m.Token, 1)
	reply, err := q.run(ctx, op, s, append([]any{m.ID, m.Token}, args...)...)
	var held bool
	var deadline int64
	if err == nil {
		if held, deadline, err = decodeSettle(reply); err != nil {
			err = q.refuse(op, err)
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
		return 0, q.refuse(op, ErrNotHeld)
	}
	return deadline, nil
}
