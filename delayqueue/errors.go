package delayqueue

import (
	"errors"
	"strconv"
	"strings"

	"github.com/slotlimit/slotlimit/internal/kernel"
)

// errs makes every error of the package, each naming the method and the
// queue's Key: `delayqueue: ack "jobs": not held`.
var errs = kernel.NewErrors("delayqueue")

var (
	// ErrInvalidConfig is returned by New when the client or the Config
	// cannot work, by every method of a zero or nil Queue, and by Ack,
	// Nack and Extend given a Message not made by Poll (a zero Message, a
	// dead letter). New refuses a nil client, an empty Key, a Key with a
	// '}' but no hash tag, a Key that a package of this module keeps
	// beside another key (such as another queue's "{k}/delayqueue:dead"),
	// a negative Visibility, one above 0 but under a millisecond or one
	// above MaxDelay, and a MaxAttempts that is negative or above
	// math.MaxInt32. Nothing was sent.
	ErrInvalidConfig = errs.InvalidConfig

	// ErrNotHeld is returned by Ack, Nack and Extend when the delivery's
	// lease has lapsed: the message is due again (it may have been
	// delivered again already), or the delivery was given back or acked
	// (see Ack for a repeat of the same call). It is also the cause of
	// the cancellation of the handler's context in Run when the lease is
	// lost.
	ErrNotHeld = errs.NotHeld

	// ErrInvalidArgument is returned, with nothing sent, for a negative
	// or too long delay, a zero time or one before 1970 or after 2^53 ms
	// from it, a payload above MaxPayload, an ID the queue cannot hold
	// (see WithID) or one given to two jobs of a batch, a batch above
	// MaxBatch messages or MaxBatchBytes, a bad count of workers or a nil
	// handler for Run, and a nil context, given to any method.
	ErrInvalidArgument = errs.InvalidArgument

	// ErrDuplicate is matched by the error of a Push, PushAt or PushBatch
	// given an ID (WithID, Job.ID) that another push queued: a message of
	// that ID is queued, delayed, in flight or dead, and was left as it
	// was. The error is a *DuplicateError that names the IDs. It matches
	// no other error of the package.
	ErrDuplicate = errors.New("delayqueue: duplicate ID")

	// ErrOutcomeUnknown is matched by every error of a call that was sent
	// to Redis and got no answer: the connection broke or timed out, or
	// the context ended mid-call. The call may or may not have taken
	// effect; each method's doc says what calling it again does. It is
	// the one value every package of the module exports under this name.
	// An error returned before anything was sent, ErrNotHeld,
	// ErrDuplicate and a Redis error reply (such as WRONGTYPE) never
	// match it.
	ErrOutcomeUnknown = kernel.ErrOutcomeUnknown
)

// A DuplicateError names the IDs of a push that another push had queued
// already, in the order given. It matches ErrDuplicate.
type DuplicateError struct {
	IDs []string
}

func (e *DuplicateError) Error() string {
	quoted := make([]string, len(e.IDs))
	for i, id := range e.IDs {
		quoted[i] = strconv.Quote(id)
	}
	return ErrDuplicate.Error() + ": " + strings.Join(quoted, ", ")
}

// Unwrap returns ErrDuplicate.
func (e *DuplicateError) Unwrap() error { return ErrDuplicate }

// errNotPolled is the error of Ack, Nack and Extend given a Message
// without an ID or a Token.
var errNotPolled = errs.Config("message not made by Poll")
