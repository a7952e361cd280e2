package delayqueue

import (
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/observe"
)

const (
	// DefaultVisibility is the lease time used when Config.Visibility is 0.
	DefaultVisibility = 30 * time.Second

	// DefaultMaxAttempts is used when Config.MaxAttempts is 0.
	DefaultMaxAttempts = 10
)

// Config describes one queue.
type Config struct {
	// Key is the queue's name. Its keys carry the package's name inside
	// Key's hash tag: its sorted set of messages is Key + ":delayqueue"
	// for a Key with a hash tag such as "{tenant}:jobs", and
	// "{" + Key + "}/delayqueue" for any other (so "x" and "{x}" keep apart), and its other keys add a
	// suffix of their own to that, all in one Redis Cluster hash slot.
	// Nothing is kept at Key itself, so another package's primitive given
	// the same Key (a slotlimit.Limiter, a recent.List) never touches the
	// queue's messages, nor the queue its data. A Key with a '}' but no
	// hash tag, and one that a package of this module keeps beside
	// another key (such as "{k}/recent"), are refused. Required.
	Key string

	// Visibility is the lease on a polled message: unacked by then, by
	// the server's clock, it is delivered again. Kept to the millisecond,
	// from 1ms to MaxDelay. 0 means DefaultVisibility.
	Visibility time.Duration

	// MaxAttempts is how many deliveries a message gets: one whose lease
	// lapses, or that is given back by Nack, on its MaxAttempts-th
	// delivery goes to the dead letters instead. At most math.MaxInt32. 0
	// means DefaultMaxAttempts.
	MaxAttempts int

	// Backoff is how long Run waits before delivering again a message
	// whose handler failed on delivery attempt. nil means DefaultBackoff.
	// Its result is held within [0, MaxDelay].
	Backoff func(attempt int) time.Duration

	// OnError, if set, is called with each error Run meets and goes on
	// from: a Poll that failed (Redis down) and is tried again, an Extend
	// that failed and is retried, an Ack or Nack that failed, whose
	// message is then delivered again once its lease lapses. It is
	// called from Run's workers, possibly at once from several.
	OnError func(error)

	// Observer, if set, is told of each call's outcome, as one final
	// event, with Package "delayqueue" and Op the method's name:
	// Push, PushAt and PushBatch report Done, Units the messages given
	// and Holder the message's ID (empty for a PushBatch), or Refused
	// when every ID given was queued already (ErrDuplicate); Poll reports
	// Acquired, after Waited when it slept; Ack and Nack report Released,
	// and Extend Renewed, Held false when they returned ErrNotHeld;
	// Requeue and Drop report Done, Units the IDs given; a call that
	// failed reports Error. Poll, Ack, Nack and Extend name the delivery's
	// Token as the Holder, so one delivery's events share it. Run reports
	// the calls it makes, but not a Poll its ctx ended, and a LeaseLost
	// when a handler's lease is lost. Reads (Len, DeadLetters), and calls
	// refused before anything is sent, report nothing. A nil Observer
	// costs nothing.
	Observer observe.Observer

	// DisableCoalescing sends each call to Redis as its own script call.
	// By default, concurrent calls of one kind on one Queue (Push, PushAt
	// and PushBatch; the calls of Poll; Ack), made through the same
	// Queue, share one script call; each caller gets its own result,
	// error and Observer event, as it would alone.
	DisableCoalescing bool
}

// DefaultBackoff is Run's delay before delivering again a message whose
// handler failed: a second after the first attempt, doubling with each
// attempt up to ten minutes, plus up to a fifth more at random, so that
// failing messages spread out.
func DefaultBackoff(attempt int) time.Duration {
	d := 10 * time.Minute
	if attempt >= 1 && attempt <= 10 {
		d = min(time.Second<<(attempt-1), d)
	}
	return d + rand.N(d/5+1)
}

// check validates c, but for Key, which New checks, and fills in the
// defaults.
func (c Config) check() (Config, error) {
	if err := errs.Duration("Visibility", c.Visibility, MaxDelay); err != nil {
		return c, err
	}
	if c.MaxAttempts < 0 || c.MaxAttempts > math.MaxInt32 {
		return c, errs.Config("MaxAttempts is %d, must be from 0 to %d", c.MaxAttempts, math.MaxInt32)
	}
	if c.Visibility == 0 {
		c.Visibility = DefaultVisibility
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Backoff == nil {
		c.Backoff = DefaultBackoff
	}
	return c, nil
}

// String describes the queue, e.g. `"jobs" delay queue, 30s leases, 10 attempts`.
func (c Config) String() string {
	return strconv.Quote(c.Key) + " delay queue, " + c.Visibility.String() + " leases, " + strconv.Itoa(c.MaxAttempts) + " attempts"
}
