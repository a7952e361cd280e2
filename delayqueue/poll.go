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
// it to the caller: in one script, the message moves from the queue to in
// flight, with a lease that lapses Config.Visibility later unless Ack,
// Nack or Extend comes first. While its lease lives, no other Poll gets
// it. When it lapses, the message is due again, and its next delivery has
// Attempt+1; a message whose MaxAttempts-th lease lapses goes to the dead
// letters instead.
//
// Poll does not poll. A consumer with nothing due registers in Redis as a
// waiter and sleeps. A push, a Nack or a lapse that makes a message due
// wakes one waiter by a notice naming it, and that waiter alone, which
// takes the message within a round trip; one waiter, the keeper, sleeps
// until the next due time; the others poll once a second, so a notice
// lost while a subscription is restored delays a message a second at
// most, and an idle consumer costs Redis one command a second.
//
// Poll mints the delivery's Token before it sends its first call, so a
// call that go-redis sends again after its reply was lost finds the
// delivery its first run made and returns it: the same message, the same
// Attempt, the same Deadline; no attempt is spent on a delivery nobody
// got.
//
// Poll waits: it is not a try that returns when nothing is due. If ctx
// ends first, Poll returns an error that matches ctx.Err() and leaves the
// waiters. An error from Redis is returned at once. A Poll that fails
// with an error matching ErrOutcomeUnknown (its reply lost for good, or
// ctx ended while its call was out) gives back, before it returns, the
// delivery its call may have made, so that calling it again is safe: the message is due again at once, with no attempt
// spent, for the next Poll. If that give-back cannot reach Redis either,
// the message is in flight for nobody, and is delivered again when its
// lease lapses: delivery is at least once.
func (q *Queue) Poll(ctx context.Context) (Message, error) {
	m, _, err := q.poll(ctx, false)
	return m, err
}

// poll is Poll, and also returns when the call that took the message was
// sent, so that its lease cannot lapse before that time plus Visibility.
// In Run, quiet, a Poll that ctx ended reports nothing to the Observer.
func (q *Queue) poll(ctx context.Context, quiet bool) (m Message, sent time.Time, err error) {
	if err := q.usable(ctx); err != nil {
		return Message{}, time.Time{}, err
	}
	if err := ctx.Err(); err != nil {
		return Message{}, time.Time{}, q.refuse("poll", err)
	}
	name := crand.Text()
	var slept time.Time // when it first found nothing due
	if c := q.begin("Poll", name, 1); c.On() {
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
		m, wait, err := q.pollOnce(ctx, name, waiting)
		if err != nil {
			if waiting || callerr.OutcomeUnknown(err) {
				q.leave(ctx, name)
			}
			return Message{}, time.Time{}, q.fail(ctx, "poll", err)
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
			return Message{}, time.Time{}, q.refuse("poll", ctx.Err())
		case <-w.Wake():
		case <-timer.C:
		}
	}
}

// pollOnce runs poll.lua with name as the delivery's token: a message, or
// how long to wait. A call with waiting false, the first of a Poll,
// neither registers the consumer as a waiter nor reads the waiters: it
// takes a due message, or answers that nothing is due (wait 0).
func (q *Queue) pollOnce(ctx context.Context, name string, waiting bool) (Message, time.Duration, error) {
	flag := "0"
	if waiting {
		flag = "1"
	}
	reply, err := q.runner.Run(ctx, pollScript, q.keys, name, q.vis, q.max, ms(registration), ms(refresh), q.notify, flag).Result()
	if err != nil {
		return Message{}, 0, err
	}
	m, wait, err := decodePoll(reply)
	if m.ID != "" {
		m.Token = name
	}
	return m, wait, err
}

// leave takes a consumer whose Poll ended off the waiters, and gives back
// a delivery named by its name that the Poll never got (see leave.lua),
// detached from ctx and bounded by leaveTimeout; a consumer it cannot
// reach lapses from the waiters within the registration time.
func (q *Queue) leave(ctx context.Context, name string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaveTimeout)
	defer cancel()
	q.runner.Run(ctx, leaveScript, q.keys, name, q.notify) //nolint:errcheck // best effort
}

// parseWake reads a notice: the name of the consumer it wakes.
func parseWake(payload string) (string, bool) {
	return payload, payload != ""
}
