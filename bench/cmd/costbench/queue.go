package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/delayqueue"
)

// asynqForward is asynq's forwarder interval (DelayedTaskCheckInterval) in
// the delay-queue row.
const asynqForward = 100 * time.Millisecond

// drainPoll is how often a phase checks whether its tasks are all taken.
const drainPoll = time.Millisecond

// Names of the delay-queue variants.
const (
	nameQueue = "slotlimit delayqueue: Push + Run"
	nameAsynq = "hibiken/asynq: Enqueue + Server, DelayedTaskCheckInterval 100ms"
)

// A queue is one delay-queue variant on a client of its own, so that what
// its consumers leave running between phases never counts in another's.
type queue struct {
	name   string
	client *redis.Client
	hook   *harness.CommandCounter
	push   func(ctx context.Context, payload []byte) error
	// start starts workers consumers, which call deliver as each task's
	// handler runs, before the task is acked; stop stops them and returns
	// the first error one met.
	start func(ctx context.Context, workers int, deliver func()) (stop func() error, err error)
}

// libraryQueue is the package's Queue: Push, due at once, and Run.
func (b *bench) libraryQueue() (queue, error) {
	v := queue{name: nameQueue}
	v.client, v.hook = b.NewClient(0)
	q, err := delayqueue.New(v.client, delayqueue.Config{Key: b.Key("dq")})
	if err != nil {
		return v, err
	}
	v.push = func(ctx context.Context, payload []byte) error {
		_, err := q.Push(ctx, payload, 0)
		return err
	}
	v.start = func(ctx context.Context, workers int, deliver func()) (func() error, error) {
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- q.Run(ctx, workers, func(context.Context, delayqueue.Message) error {
				deliver()
				return nil
			})
		}()
		return func() error {
			cancel()
			if err := <-done; err != nil && ctx.Err() == nil {
				return err
			}
			return nil
		}, nil
	}
	return v, nil
}

// asynqQueue is asynq on a client of its own: Client.Enqueue, due at
// once, and a Server of workers workers with its forwarder every
// asynqForward and every other setting at its default.
func (b *bench) asynqQueue() queue {
	v := queue{name: nameAsynq}
	v.client, v.hook = b.NewClient(0)
	qname := b.Key("asynq")
	client := asynq.NewClientFromRedisClient(v.client)
	v.push = func(ctx context.Context, payload []byte) error {
		_, err := client.EnqueueContext(ctx, asynq.NewTask("costbench", payload), asynq.Queue(qname))
		return err
	}
	v.start = func(ctx context.Context, workers int, deliver func()) (func() error, error) {
		srv := asynq.NewServerFromRedisClient(v.client, asynq.Config{
			Concurrency:              workers,
			Queues:                   map[string]int{qname: 1},
			DelayedTaskCheckInterval: asynqForward,
			LogLevel:                 asynq.ErrorLevel,
		})
		err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
			deliver()
			return nil
		}))
		if err != nil {
			return nil, err
		}
		return func() error { srv.Shutdown(); return nil }, nil
	}
	return v
}

// queueRow runs each delay queue's phase b.Rounds times, after a warm-up,
// the variants taking turns in every round.
func (b *bench) queueRow(ctx context.Context) ([]result, error) {
	lib, err := b.libraryQueue()
	if err != nil {
		return nil, err
	}
	vs := []queue{lib, b.asynqQueue()}
	warm := harness.Bounds{Workers: b.Workers, Duration: b.Duration, MaxOps: warmupCalls * int64(b.Workers)}
	for _, v := range vs {
		if _, err := b.queuePhase(ctx, v, warm); err != nil {
			return nil, fmt.Errorf("warm-up of %s: %w", v.name, err)
		}
	}
	rounds := make([][]harness.Phase, len(vs))
	for range b.Rounds {
		for i, v := range vs {
			ph, err := b.queuePhase(ctx, v, b.Bounds(b.Workers))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v.name, err)
			}
			rounds[i] = append(rounds[i], ph)
		}
	}
	out := make([]result, len(vs))
	for i, v := range vs {
		out[i] = newResult(v.name, rounds[i])
	}
	return out, nil
}

// queuePhase is one measured phase of v: its consumers start, b.Workers of
// them, then bounds.Workers producers push tasks due at once, within
// bounds and never more than b.backlog ahead of the consumers, and the
// phase ends when every task pushed has been taken, within harness.Grace
// of the producers' end. Its operations are the tasks taken, and its
// commands those of v's client.
func (b *bench) queuePhase(ctx context.Context, v queue, bounds harness.Bounds) (harness.Phase, error) {
	tokens := make(chan struct{}, b.backlog)
	var taken, seq atomic.Int64
	stop, err := v.start(ctx, b.Workers, func() {
		taken.Add(1)
		<-tokens
	})
	if err != nil {
		return harness.Phase{}, err
	}
	ph, err := b.measureOn(ctx, v.hook, func() (int64, error) {
		pushed, err := harness.Drive(ctx, bounds, func(ctx context.Context, _ int) error {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			if err := v.push(ctx, binary.BigEndian.AppendUint64(nil, uint64(seq.Add(1)))); err != nil {
				<-tokens
				return err
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		end := time.Now().Add(harness.Grace)
		for taken.Load() < pushed && time.Now().Before(end) {
			time.Sleep(drainPoll)
		}
		if n := taken.Load(); n < pushed {
			return 0, fmt.Errorf("%d of %d tasks not taken within %v of the last push", pushed-n, pushed, harness.Grace)
		}
		return pushed, nil
	})
	if stopErr := stop(); err == nil {
		err = stopErr
	}
	return ph, err
}

// measureOn is Env.Measure with the commands counted by hook, another
// client's, in place of the load client's. The steps run one at a time.
func (b *bench) measureOn(ctx context.Context, hook *harness.CommandCounter, load func() (int64, error)) (harness.Phase, error) {
	saved := b.Hook
	b.Hook = hook
	defer func() { b.Hook = saved }()
	return b.Measure(ctx, load)
}

// cleanup takes the run's asynq queue off asynq's list of queues, a key
// outside the run's prefix; Env.Close deletes every other key of the run.
func (b *bench) cleanup(ctx context.Context) error {
	return b.Admin.SRem(ctx, "asynq:queues", b.Key("asynq")).Err()
}
