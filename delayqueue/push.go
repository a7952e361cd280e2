package delayqueue

import (
	"context"
	crand "crypto/rand"
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

// MaxIDLen bounds a message ID given by the caller, in bytes.
const MaxIDLen = 256

// A Job is one message of a PushBatch: its payload, due after Delay, or
// at At when At is not zero, under ID when ID is not empty.
type Job struct {
	ID      string        // when not empty, the message's ID, as WithID gives it; else one is minted
	Payload []byte        // at most MaxPayload bytes
	Delay   time.Duration // due this long after the push, by the server's clock; 0: at once
	At      time.Time     // when not zero, due at At instead, as PushAt
}

// A PushOption is an option of Push and PushAt.
type PushOption struct {
	id    string
	hasID bool
}

// WithID gives the message the ID id instead of one Push mints, so that
// a push can be made again without queueing the message twice: while a
// message of that ID is queued, delayed, in flight or dead, another push
// of it changes nothing and returns an error matching ErrDuplicate. Once
// the message is acked or dropped, its ID is free again. id must be 1 to
// MaxIDLen bytes, none of them a space or a control character, and must
// not begin with '#'.
func WithID(id string) PushOption { return PushOption{id: id, hasID: true} }

// Push queues payload, due delay from now by the server's clock (0: at
// once), and returns its ID. Messages due at the same millisecond come
// out in push order.
//
// It returns an error matching ErrInvalidArgument, with nothing sent, for
// a delay that is negative or above MaxDelay, a payload above MaxPayload
// or a bad ID (see WithID); and the ID with an error matching
// ErrDuplicate when a message of the ID that WithID gave is queued
// already, and left as it was. A call that go-redis sends again answers
// as its first run did, and queues nothing twice, unless the message was
// delivered and acked in between: it is then queued again, never lost.
// After an error matching ErrOutcomeUnknown, a Push
// made again with the same WithID queues the message once, and returns
// nil or ErrDuplicate; one without WithID mints another ID, and may queue
// the message twice, never lose it.
func (q *Queue) Push(ctx context.Context, payload []byte, delay time.Duration, opts ...PushOption) (id string, err error) {
	return q.pushOne(ctx, "Push", Job{Payload: payload, Delay: delay}, opts)
}

// PushAt is Push of a message due at at, read on the server's clock to
// the millisecond: a time in the past is due at once, with DueAt at. A
// zero at, one before 1970, or one more than 2^53 ms after it, which the
// scripts cannot hold exactly, is refused with ErrInvalidArgument.
func (q *Queue) PushAt(ctx context.Context, payload []byte, at time.Time, opts ...PushOption) (id string, err error) {
	if err := q.check(ctx, "PushAt"); err != nil {
		return "", err
	}
	if at.IsZero() {
		return "", q.refuse("PushAt", errs.Argument("the time is zero"))
	}
	return q.pushOne(ctx, "PushAt", Job{Payload: payload, At: at}, opts)
}

// PushBatch queues jobs in one script call and returns their IDs, in
// order. Jobs due at the same millisecond come out in the order given.
// Every job whose ID is new is queued; when some jobs' IDs were queued
// already, those are left as they were, and the error matches
// ErrDuplicate and is a *DuplicateError naming them. It refuses, with
// ErrInvalidArgument and nothing sent, more than MaxBatch jobs, payloads
// above MaxBatchBytes together, one ID given to two jobs, and any job
// Push or PushAt would refuse. No jobs send nothing and return no IDs.
// Sent again, or made again, it does what Push does, job by job.
func (q *Queue) PushBatch(ctx context.Context, jobs []Job) (ids []string, err error) {
	return q.push(ctx, "PushBatch", jobs)
}

// pushOne is Push or PushAt, named method, of job with opts.
func (q *Queue) pushOne(ctx context.Context, method string, job Job, opts []PushOption) (string, error) {
	if err := q.check(ctx, method); err != nil {
		return "", err
	}
	for _, o := range opts {
		if o.hasID {
			if o.id == "" {
				return "", q.refuse(method, errs.Argument("the ID is empty"))
			}
			job.ID = o.id
		}
	}
	ids, err := q.push(ctx, method, []Job{job})
	if ids == nil {
		return "", err
	}
	return ids[0], err
}

// push is PushBatch, named method.
func (q *Queue) push(ctx context.Context, method string, jobs []Job) (ids []string, err error) {
	if err := q.check(ctx, method); err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	if err := checkJobs(jobs); err != nil {
		return nil, q.refuse(method, err)
	}
	// IDs are minted, and a push token for the IDs given, before the
	// first send, so that a call sent again finds its own first run.
	ids = make([]string, len(jobs))
	token := ""
	for i, job := range jobs {
		switch {
		case job.ID == "":
			ids[i] = crand.Text()
		case token == "":
			token = crand.Text()
			fallthrough
		default:
			ids[i] = job.ID
		}
	}
	holder := ""
	if len(ids) == 1 {
		holder = ids[0]
	}
	size := 0
	for _, job := range jobs {
		size += len(job.Payload)
	}
	c := q.base.Begin(method, q.base.Key, holder, int64(len(jobs)), 0)
	res, err := q.sendPush(ctx, pushCall{token: token, jobs: jobs, ids: ids, size: size})
	dups := res.dups
	switch {
	case err != nil:
		err = errs.Call(ctx, method, q.base.Key, err)
	case res.err != nil:
		err = errs.Call(ctx, method, q.base.Key, res.err)
	case res.bad != nil:
		err = q.refuse(method, res.bad)
	}
	if err != nil {
		c.Failed(ctx, err)
		return nil, err
	}
	if len(dups) == len(jobs) {
		c.Refused(ctx, -1) // every ID was queued already: nothing was pushed
	} else {
		c.Done(ctx)
	}
	if len(dups) > 0 {
		d := &DuplicateError{IDs: make([]string, len(dups))}
		for i, k := range dups {
			d.IDs[i] = ids[k]
		}
		return ids, q.refuse(method, d)
	}
	return ids, nil
}

// maxAt is the latest due time the scripts hold exactly: 2^53 ms.
var maxAt = time.UnixMilli(1 << 53)

// jobError is the error of job i of n that cannot be pushed, which names
// the job in a batch: "job 3: payload of ...".
func jobError(n, i int, format string, args ...any) error {
	if n > 1 {
		return errs.Argument("job %d: "+format, append([]any{i}, args...)...)
	}
	return errs.Argument(format, args...)
}

// checkJobs returns the error of jobs that cannot be pushed, or nil.
func checkJobs(jobs []Job) error {
	if len(jobs) > MaxBatch {
		return errs.Argument("%d jobs, above MaxBatch %d", len(jobs), MaxBatch)
	}
	total := 0
	var given map[string]int // the jobs of each ID given, in a batch
	for i, job := range jobs {
		if err := checkDelay(job.Delay); err != nil {
			return err
		}
		if len(job.Payload) > MaxPayload {
			return jobError(len(jobs), i, "payload of %d bytes, above MaxPayload %d", len(job.Payload), MaxPayload)
		}
		total += len(job.Payload)
		switch {
		case job.At.IsZero():
		case job.At.After(maxAt):
			return jobError(len(jobs), i, "time %v is more than 2^53 ms after 1970", job.At)
		case job.At.UnixMilli() <= 0:
			return jobError(len(jobs), i, "time %v is before 1970", job.At)
		}
		if job.ID == "" {
			continue
		}
		if err := checkID(job.ID); err != nil {
			return err
		}
		if len(jobs) > 1 {
			if given == nil {
				given = make(map[string]int)
			}
			if first, ok := given[job.ID]; ok {
				return errs.Argument("jobs %d and %d have the same ID %q", first, i, job.ID)
			}
			given[job.ID] = i
		}
	}
	if total > MaxBatchBytes {
		return errs.Argument("payloads of %d bytes together, above MaxBatchBytes %d", total, MaxBatchBytes)
	}
	return nil
}

// checkID returns the error of an ID the queue cannot hold: above
// MaxIDLen bytes; with a space or a control character, which its entries
// use to separate fields; or beginning with '#', which marks a field of
// its own beside the messages' bodies.
func checkID(id string) error {
	switch {
	case len(id) > MaxIDLen:
		return errs.Argument("ID of %d bytes, above MaxIDLen %d", len(id), MaxIDLen)
	case id[0] == '#':
		return errs.Argument("ID %q begins with '#'", id)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c == 0x7f {
			return errs.Argument("ID %q holds a space or a control character", id)
		}
	}
	return nil
}

func checkDelay(delay time.Duration) error {
	if delay < 0 || delay > MaxDelay {
		return errs.Argument("delay %v is not within [0, %v]", delay, MaxDelay)
	}
	return nil
}
