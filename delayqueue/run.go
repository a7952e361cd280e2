package delayqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotlimit/slotlimit/internal/keepalive"
	"github.com/slotlimit/slotlimit/internal/observe"
)

// settleTimeout bounds the Ack or Nack that follows a handler in Run.
const settleTimeout = 5 * time.Second

// A Handler handles one delivery of a message in Run. It returns nil when
// the message is done, and an error to have it delivered again later. ctx
// is cancelled when Run's ctx ends or the delivery's lease is lost (with
// cause ErrNotHeld): the message may then be delivered to another
// consumer, so the handler should stop.
type Handler func(ctx context.Context, m Message) error

// Run is the consumer loop: workers goroutines Poll the queue, each
// handling one message at a time with handler, until ctx ends, when Run
// waits for the handlers to return and returns ctx's error.
//
// A handler keeps its message's lease while it runs, however long; if
// the lease is lost, its ctx is cancelled with cause ErrNotHeld. A
// handler that returns nil has its message acked; one that returns an
// error, or panics, has it given back, due again after
// Config.Backoff(Attempt) (at once when ctx has ended), until its
// MaxAttempts-th delivery makes it a dead letter. A Poll that fails is
// tried again after a pause of up to a second; an Ack or Nack that fails
// leaves the message to be delivered again when its lease lapses; each
// such error is passed to Config.OnError. Run returns an error matching
// ErrInvalidArgument, with nothing sent, when workers is below 1 or
// handler is nil.
func (q *Queue) Run(ctx context.Context, workers int, handler Handler) error {
	if err := q.check(ctx, "Run"); err != nil {
		return err
	}
	if workers < 1 {
		return q.refuse("Run", errs.Argument("workers is %d, must be at least 1", workers))
	}
	if handler == nil {
		return q.refuse("Run", errs.Argument("handler is nil"))
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.work(ctx, handler)
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// work is one worker of Run.
func (q *Queue) work(ctx context.Context, handler Handler) {
	pause := 10 * time.Millisecond
	for ctx.Err() == nil {
		m, sent, err := q.poll(ctx, true)
		if err != nil {
			if ctx.Err() == nil {
				q.report(err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(pause):
			}
			pause = min(2*pause, time.Second)
			continue
		}
		pause = 10 * time.Millisecond
		q.handle(ctx, m, sent, handler)
	}
}

// handle runs handler on m, delivered by a call sent at sent, under a
// keep-alive of its lease, then acks or gives it back.
func (q *Queue) handle(ctx context.Context, m Message, sent time.Time, handler Handler) {
	var failed error
	var delay time.Duration
	var deadline atomic.Int64 // m's lease deadline as last renewed, ms
	deadline.Store(m.Deadline.UnixMilli())
	// settled is m with the deadline its last renewal gave, so that an Ack
	// or Nack sent again answers as its first run did.
	settled := func() Message {
		s := m
		s.Deadline = time.UnixMilli(deadline.Load())
		return s
	}
	lease := keepalive.New(keepalive.Config{
		TTL: q.cfg.Visibility,
		Renew: func(ctx context.Context) (bool, error) {
			d, err := q.extend(ctx, m)
			if err == nil {
				deadline.Store(d.UnixMilli())
			}
			return q.held(err)
		},
		Release: func(ctx context.Context) (bool, error) {
			if failed == nil {
				return q.held(q.Ack(ctx, settled()))
			}
			return q.held(q.Nack(ctx, settled(), delay))
		},
		ErrLost: ErrNotHeld,
		OnLost: func(ctx context.Context) {
			observe.Lost(ctx, q.base.Observer, errs.Package(), q.base.Key, m.Token, ErrNotHeld)
		},
	})
	lease.Taken(sent)
	failed = call(lease.KeepAlive(ctx), m, handler)
	if failed != nil && ctx.Err() == nil {
		// When shutting down, a failed message is given back due at once.
		delay = min(max(q.cfg.Backoff(m.Attempt), 0), MaxDelay)
	}
	settle, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	lease.Release(settle) //nolint:errcheck // reported; a message not settled is delivered again when its lease lapses
}

// held maps an error of Ack, Nack or Extend to keepalive's (held, error),
// and passes any but ErrNotHeld to Config.OnError.
func (q *Queue) held(err error) (bool, error) {
	if errors.Is(err, ErrNotHeld) {
		return false, nil
	}
	if err != nil {
		q.report(err)
	}
	return err == nil, err
}

// report passes err to Config.OnError, if set.
func (q *Queue) report(err error) {
	if q.cfg.OnError != nil {
		q.cfg.OnError(err)
	}
}

// call runs handler, turning a panic into an error.
func call(ctx context.Context, m Message, handler Handler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("delayqueue: handler panicked: %v", r)
		}
	}()
	return handler(ctx, m)
}
