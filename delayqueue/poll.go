package delayqueue

import (
	"context"
	crand "crypto/rand"
	"math/rand/v2"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// leaveTimeout bounds the call that takes a consumer whose Poll ended off
// the waiters.
const leaveTimeout = time.Second

// Poll waits until a message is due, by the server's clock, and delivers
// it to the caller, leased for Config.Visibility: until Ack, Nack or
// Extend, or until the lease lapses, no other Poll gets it. A lapsed
// lease makes the message due again, for delivery Attempt+1, or, after
// its MaxAttempts-th delivery, a dead letter.
//
// Poll blocks: if ctx ends first, it returns an error matching ctx.Err()
// and delivers nothing. An error from Redis is returned at once. A call
// that go-redis sends again returns the delivery its first run made. One
// that fails with an error matching ErrOutcomeUnknown gives back, before
// it returns, the delivery its call may have made, due again at once with
// no attempt spent, so that calling it again is safe; if that give-back
// cannot reach Redis either, the message is delivered again when its
// lease lapses.
func (q *Queue) Poll(ctx context.Context) (Message, error) {
	m, _, err := q.poll(ctx, false)
	return m, err
}

// poll is Poll, and also returns when the call that took the message was
// sent, so that its lease cannot lapse before that time plus Visibility.
// In Run, quiet, a Poll that ctx ended reports nothing to the Observer.
func (q *Queue) poll(ctx context.Context, quiet bool) (m Message, sent time.Time, err error) {
	if err := q.check(ctx, "Poll"); err != nil {
		return Message{}, time.Time{}, err
	}
	if err := ctx.Err(); err != nil {
		return Message{}, time.Time{}, q.refuse("Poll", err)
	}
	name := crand.Text()
	var slept time.Time // when it first found nothing due
	if c := q.base.Begin("Poll", q.base.Key, name, 1, 0); c.On() {
		defer func() {
			if !slept.IsZero() {
				c.Waited(ctx, slept)
			}
			switch {
			case err == nil:
				c.Acquired(ctx, -1)
			case !quiet || ctx.Err() == nil:
				c.Failed(ctx, err)
			}
		}()
	}
	w := q.notices.Join(q.channel, name, parseWake)
	defer w.Leave()
	w.Expect(func(string) bool { return true })
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	waiting := false
	for {
		sent := time.Now()
		m, wait, err := q.sendPoll(ctx, name, waiting)
		if err != nil {
			if waiting || callerr.OutcomeUnknown(err) {
				q.leave(ctx, name)
			}
			return Message{}, time.Time{}, errs.Call(ctx, "Poll", q.base.Key, err)
		}
		if m.ID != "" {
			return m, sent, nil
		}
		if !waiting {
			// Nothing was due, and this first call did not register:
			// the next does, at once.
			waiting, slept = true, time.Now()
			continue
		}
		if wait >= refresh {
			wait += rand.N(refresh / 10) // spread the polls of idle consumers
		}
		if !w.Ready() {
			wait = min(wait, waitqueue.PollDelay(waitqueue.MaxPoll))
		}
		timer.Reset(max(wait, time.Millisecond))
		select {
		case <-ctx.Done():
			q.leave(ctx, name)
			return Message{}, time.Time{}, q.refuse("Poll", ctx.Err())
		case <-w.Wake():
		case <-timer.C:
		}
	}
}

// parseWake reads a notice: the name of the consumer it wakes.
func parseWake(payload string) (string, bool) {
	return payload, payload != ""
}
