package delayqueue

import (
	"context"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
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
	Payload []byte
	Delay   time.Duration
	At      time.Time
}

// Push queues payload, due delay from now by the server's clock (0: at
// once), and returns its ID. Messages due at the same millisecond come
// out in push order. A push that makes a message due before every other
// wakes one waiting consumer, not all.
//
// It returns an error matching ErrInvalidArgument, with nothing sent, for
// a delay that is negative or above MaxDelay, or a payload above
// MaxPayload. When the error leaves the outcome unknown (see
// callerr.OutcomeUnknown: a timeout, a broken connection), the message
// may have been queued; pushing it again may deliver it twice.
func (q *Queue) Push(ctx context.Context, payload []byte, delay time.Duration) (id string, err error) {
	ids, err := q.PushBatch(ctx, []Job{{Payload: payload, Delay: delay}})
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// PushAt is Push of a message due at at. at is read on the server's
// clock, to the millisecond: a caller whose clock is off from the
// server's sees it due that much off. A time in the past is due at once,
// with DueAt at. A zero at is refused with ErrInvalidArgument.
func (q *Queue) PushAt(ctx context.Context, payload []byte, at time.Time) (id string, err error) {
	if at.IsZero() {
		return "", invalidArgument("the time is zero")
	}
	ids, err := q.PushBatch(ctx, []Job{{Payload: payload, At: at}})
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// PushBatch queues jobs in one script call, all or none, and returns
// their IDs, in order. Jobs due at the same millisecond come out in the
// order given. It refuses, with ErrInvalidArgument and nothing sent, more
// than MaxBatch jobs, payloads above MaxBatchBytes together, and any job
// Push or PushAt would refuse. No jobs send nothing and return no IDs.
func (q *Queue) PushBatch(ctx context.Context, jobs []Job) (ids []string, err error) {
	if err := q.usable(); err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	args, err := pushArgs(q.notify, jobs)
	if err != nil {
		return nil, err
	}
	reply, err := q.run(ctx, "push", pushScript, args...)
	if err != nil {
		return nil, err
	}
	got, ok := reply.([]any)
	if !ok || len(got) != len(jobs) {
		return nil, q.fail(ctx, "push", callerr.UnexpectedReply(reply))
	}
	ids = make([]string, len(got))
	for i, id := range got {
		if ids[i], ok = id.(string); !ok {
			return nil, q.fail(ctx, "push", callerr.UnexpectedReply(reply))
		}
	}
	return ids, nil
}

// pushArgs checks jobs and returns push.lua's ARGV.
func pushArgs(notify any, jobs []Job) ([]any, error) {
	if len(jobs) > MaxBatch {
		return nil, invalidArgument("%d jobs, above MaxBatch %d", len(jobs), MaxBatch)
	}
	args := make([]any, 0, 1+3*len(jobs))
	args = append(args, notify)
	total := 0
	for i, job := range jobs {
		if err := checkDelay(job.Delay); err != nil {
			return nil, err
		}
		if len(job.Payload) > MaxPayload {
			return nil, invalidArgument("job %d: payload of %d bytes, above MaxPayload %d", i, len(job.Payload), MaxPayload)
		}
		total += len(job.Payload)
		at := int64(0)
		if !job.At.IsZero() {
			if at = job.At.UnixMilli(); at <= 0 {
				return nil, invalidArgument("job %d: time %v is before 1970", i, job.At)
			}
		}
		payload := job.Payload
		if payload == nil {
			payload = []byte{}
		}
		args = append(args, payload, ms(job.Delay), strconv.FormatInt(at, 10))
	}
	if total > MaxBatchBytes {
		return nil, invalidArgument("payloads of %d bytes together, above MaxBatchBytes %d", total, MaxBatchBytes)
	}
	return args, nil
}

func checkDelay(delay time.Duration) error {
	if delay < 0 || delay > MaxDelay {
		return invalidArgument("delay %v is not within [0, %v]", delay, MaxDelay)
	}
	return nil
}
