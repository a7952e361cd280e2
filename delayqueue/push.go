package delayqueue

import (
	"context"
	crand "crypto/rand"
	"strconv"
	"time"
)

// Size and time bounds, checked before anything is sent.
const (
	// MaxPayload bounds one message's payload, in bytes.
	MaxPayload = 1 << 20
	// MaxBatch bounds the messages of one PushBatch.
	MaxBatch = 1000
	// MaxBatchBytes bounds the payloads of one PushBatch together, so
	// that one script call stays short.
	MaxBatchBytes = 8 << 20
	// MaxDelay bounds a delay, of Push, a Job or Nack.
	MaxDelay = 10 * 365 * 24 * time.Hour
)

// A Job is one message of a PushBatch: its payload, due after Delay, or
// at At when At is not zero.
type Job struct {
	Payload []byte        // at most MaxPayload bytes
	Delay   time.Duration // due this long after the push, by the server's clock; 0: at once
	At      time.Time     // when not zero, due at At instead, as PushAt
}

// Push queues payload, due delay from now by the server's clock (0: at
// once), and returns its ID. Messages due at the same millisecond come
// out in push order. A push that makes a message due before every other
// wakes one waiting consumer, not all.
//
// Push mints the message's ID before it sends the call, so a call that
// go-redis sends again after its reply was lost finds the message its
// first run queued, and queues nothing twice. The one exception is a call
// sent again after the message was delivered and acked in between, within
// go-redis's retries: it queues the message again, under the same ID, and
// it is delivered twice, never lost.
//
// It returns an error matching ErrInvalidArgument, with nothing sent, for
// a delay that is negative or above MaxDelay, or a payload above
// MaxPayload. An error matching ErrOutcomeUnknown (a timeout, a broken
// connection) leaves the message queued or not: a Push called again mints
// a new ID, so the message is queued once more if the first call queued
// it, and is delivered twice, never lost.
func (q *Queue) Push(ctx context.Context, payload []byte, delay time.Duration) (id string, err error) {
	ids, err := q.push(ctx, "Push", []Job{{Payload: payload, Delay: delay}})
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// PushAt is Push of a message due at at. at is read on the server's
// clock, to the millisecond: a caller whose clock is off from the
// server's sees it due that much off. A time in the past is due at once,
// with DueAt at. A zero at, one before 1970, or one more than 2^53 ms
// after it (some 285,000 years), which the scripts cannot hold exactly,
// is refused with ErrInvalidArgument.
func (q *Queue) PushAt(ctx context.Context, payload []byte, at time.Time) (id string, err error) {
	if err := q.usable(ctx); err != nil {
		return "", err
	}
	if at.IsZero() {
		return "", q.refuse("push", invalidArgument("the time is zero"))
	}
	ids, err := q.push(ctx, "PushAt", []Job{{Payload: payload, At: at}})
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// PushBatch queues jobs in one script call, all or none, and returns
// their IDs, in order. Jobs due at the same millisecond come out in the
// order given. It refuses, with ErrInvalidArgument and nothing sent, more
// than MaxBatch jobs, payloads above MaxBatchBytes together, and any job
// Push or PushAt would refuse. No jobs send nothing and return no IDs. A
// call sent again after its reply was lost queues each job once, as Push
// does; after an error matching ErrOutcomeUnknown, a PushBatch called
// again queues all of them again if the first call queued them, as Push
// does.
func (q *Queue) PushBatch(ctx context.Context, jobs []Job) (ids []string, err error) {
	return q.push(ctx, "PushBatch", jobs)
}

// push is PushBatch, observed as the method named method.
func (q *Queue) push(ctx context.Context, method string, jobs []Job) (ids []string, err error) {
	if err := q.usable(ctx); err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	ids, args, err := pushArgs(q.notify, jobs)
	if err != nil {
		return nil, q.refuse("push", err)
	}
	holder := ""
	if len(ids) == 1 {
		holder = ids[0]
	}
	c := q.begin(method, holder, int64(len(jobs)))
	reply, err := q.run(ctx, "push", pushScript, args...)
	if err == nil {
		if _, err = decodeCount(reply, len(jobs)); err != nil {
			err = q.refuse("push", err)
		}
	}
	if err != nil {
		c.Failed(ctx, err)
		return nil, err
	}
	c.Done(ctx)
	return ids, nil
}

// maxAt is the latest due time the scripts hold exactly: 2^53 ms.
var maxAt = time.UnixMilli(1 << 53)

// pushArgs checks jobs, mints their IDs and returns them with push.lua's
// ARGV.
func pushArgs(notify any, jobs []Job) (ids []string, args []any, err error) {
	if len(jobs) > MaxBatch {
		return nil, nil, invalidArgument("%d jobs, above MaxBatch %d", len(jobs), MaxBatch)
	}
	ids = make([]string, len(jobs))
	args = make([]any, 0, 1+4*len(jobs))
	args = append(args, notify)
	total := 0
	for i, job := range jobs {
		if err := checkDelay(job.Delay); err != nil {
			return nil, nil, err
		}
		if len(job.Payload) > MaxPayload {
			return nil, nil, invalidArgument("job %d: payload of %d bytes, above MaxPayload %d", i, len(job.Payload), MaxPayload)
		}
		total += len(job.Payload)
		at := int64(0)
		if !job.At.IsZero() {
			if job.At.After(maxAt) {
				return nil, nil, invalidArgument("job %d: time %v is more than 2^53 ms after 1970", i, job.At)
			}
			if at = job.At.UnixMilli(); at <= 0 {
				return nil, nil, invalidArgument("job %d: time %v is before 1970", i, job.At)
			}
		}
		payload := job.Payload
		if payload == nil {
			payload = []byte{}
		}
		ids[i] = crand.Text()
		args = append(args, ids[i], payload, ms(job.Delay), strconv.FormatInt(at, 10))
	}
	if total > MaxBatchBytes {
		return nil, nil, invalidArgument("payloads of %d bytes together, above MaxBatchBytes %d", total, MaxBatchBytes)
	}
	return ids, args, nil
}

func checkDelay(delay time.Duration) error {
	if delay < 0 || delay > MaxDelay {
		return invalidArgument("delay %v is not within [0, %v]", delay, MaxDelay)
	}
	return nil
}
