package delayqueue

import (
	"context"
	crand "crypto/rand"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/kernel"
)

// A State is where a message is in its queue, as Messages reads it.
type State int

const (
	// Ready messages are due by the server's clock and not delivered:
	// the next Polls take them, earliest due first.
	Ready State = iota
	// Delayed messages are not due yet.
	Delayed
	// InFlight messages are delivered and not acked: each is held by a
	// consumer's lease. A lease that lapsed counts here until a Poll
	// gives its message back, as in Len.
	InFlight
	// Dead messages are dead letters (see DeadLetters).
	Dead
)

// String returns the state's name: "ready", "delayed", "in flight" or
// "dead"; for a value that is no State, "State(N)".
func (s State) String() string {
	switch s {
	case Ready:
		return "ready"
	case Delayed:
		return "delayed"
	case InFlight:
		return "in flight"
	case Dead:
		return "dead"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// arg is the state as messages.lua takes it, and false for no State.
func (s State) arg() (string, bool) {
	switch s {
	case Ready:
		return "ready", true
	case Delayed:
		return "delayed", true
	case InFlight:
		return "inflight", true
	case Dead:
		return "dead", true
	}
	return "", false
}

// Messages returns up to count of the queue's messages in state, after
// skipping the first offset of them, read at one instant. It writes
// nothing. Each Message has its ID, its Payload, and Attempt the
// deliveries it has had so far, counting the one in flight; Token is
// empty, so that no Ack, Nack or Extend can be made with it (they return
// ErrInvalidConfig). The order, and what DueAt and Deadline hold, follow
// the state:
//
//   - Ready and Delayed: earliest due first, as Polls take them; DueAt is
//     when the message is due on the server's clock, Deadline is zero.
//   - InFlight: earliest lease deadline first; DueAt is when the message
//     became due, Deadline when its lease lapses (it may have passed).
//   - Dead: oldest first, as DeadLetters; DueAt is when the message was
//     dead-lettered, Deadline is zero.
//
// Messages move between states as consumers work, so pages read one
// after another may skip or repeat a message. A state that is no State,
// a negative offset, or a count that is not from 1 to MaxBatch returns
// ErrInvalidArgument, with nothing sent. A page of ready or delayed
// messages costs Redis a read of the messages before it, as ZRANGEBYSCORE
// with a LIMIT does; the others, as ZRANGE does.
func (q *Queue) Messages(ctx context.Context, state State, offset, count int) ([]Message, error) {
	if err := q.check(ctx, "Messages"); err != nil {
		return nil, err
	}
	s, ok := state.arg()
	switch {
	case !ok:
		return nil, q.refuse("Messages", errs.Argument("state %d, not a State", int(state)))
	case offset < 0:
		return nil, q.refuse("Messages", errs.Argument("offset is %d, must be 0 or more", offset))
	case count < 1 || count > MaxBatch:
		return nil, q.refuse("Messages", errs.Argument("count is %d, must be from 1 to %d", count, MaxBatch))
	}
	// No state holds 2^32 messages, as no sorted set can: an offset past
	// that is past the end, and Lua's numbers read it exactly.
	r, err := q.run(ctx, "Messages", messagesScript, s, min(offset, 1<<32), count)
	if err != nil {
		return nil, err
	}
	msgs, err := decodeMessages(r)
	if err != nil {
		return nil, q.refuse("Messages", err)
	}
	return msgs, nil
}

// cancelRecordTTL is how long a Cancel's record of its call lives: far
// longer than a client's retries of one call take.
const cancelRecordTTL = time.Minute

// cancelRecordSuffix begins the names of Cancel's records beside the Key.
const cancelRecordSuffix = "delayqueue:cancelled:"

// Cancel deletes for good the messages among ids that are ready or
// delayed, with their payloads, leaves the other ids alone, and returns
// how many of ids it deleted. A message that is deleted is never
// delivered, and its ID, if its pusher gave it (WithID), may be pushed
// again.
//
// A message in flight is left alone and not counted: its consumer holds
// it, and its Ack, Nack or Extend acts on it as it would have. Cancel it
// once it is given back (a Nack, or a lapsed lease) and waits to be
// delivered again. A dead letter is left alone too: Drop deletes those.
//
// A Cancel sent again after its reply was lost answers what its first
// run deleted, and deletes nothing more: the first run leaves a record of
// its answer beside the queue, named by a token Cancel draws before it
// sends the call, which lapses a minute later. A Cancel made again, after
// an error matching ErrOutcomeUnknown, is a new call: it counts only what
// it finds still queued.
//
// Nothing indexes a queued message by its ID, so Cancel reads the queue
// in due order, up to the last message it deletes: on a large queue, a
// Cancel of a message due last costs Redis a read of every message. It
// refuses more than MaxBatch ids with ErrInvalidArgument, with nothing
// sent.
func (q *Queue) Cancel(ctx context.Context, ids ...string) (int, error) {
	if err := q.check(ctx, "Cancel"); err != nil {
		return 0, err
	}
	if len(ids) > MaxBatch {
		return 0, q.refuse("Cancel", errs.Argument("%d ids, above MaxBatch %d", len(ids), MaxBatch))
	}
	if len(ids) == 0 {
		return 0, nil
	}
	keys := make([]string, 0, numKeys+1)
	keys = append(keys, q.keys...)
	keys = append(keys, q.records+crand.Text())
	c := q.base.Begin("Cancel", q.base.Key, "", int64(len(ids)), 0)
	v, err := q.base.Runner.Run(ctx, cancelScript, keys, idArgs(ms(cancelRecordTTL), ids)...).Result()
	n := 0
	if err != nil {
		err = errs.Call(ctx, "Cancel", q.base.Key, err)
	} else if n, err = decodeCount(kernel.ReadReply(v), len(ids)); err != nil {
		err = q.refuse("Cancel", err)
	}
	if err != nil {
		c.Failed(ctx, err)
		return 0, err
	}
	c.Done(ctx)
	return n, nil
}
