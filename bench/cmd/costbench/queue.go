package main

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/bench/internal/queues"
	"github.com/slotlimit/slotlimit/delayqueue"
)

// asynqForward is asynq's forwarder interval (DelayedTaskCheckInterval) in
// the delay-queue row.
const asynqForward = 100 * time.Millisecond

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
	push   queues.Push
	// start starts consumers, which call deliver as each task's handler
	// runs, before the task is acked.
	start queues.Start
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
	v.start = func(ctx context.Context, workers int, deliver func([]byte)) (func() error, error) {
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			q.Run(ctx, workers, func(_ context.Context, m delayqueue.Message) error {
				deliver(m.Payload)
				return nil
			})
		}()
		return func() error {
			cancel()
			<-done // Run returns once its workers have, with its ctx's error
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
	push := queues.AsynqPush(v.client, qname, "costbench")
	v.push = func(ctx context.Context, payload []byte) error { return push(ctx, payload, 0) }
	v.start = queues.AsynqStart(v.client, qname, asynqForward)
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

// queuePhase is one measured phase of v (see queues.Triples): its
// consumers start, b.Workers of them, then bounds.Workers producers push
// tasks due at once, within bounds and never more than b.backlog ahead of
// the consumers, and the phase ends when every task pushed has been taken.
// Its operations are the tasks taken, and its commands those of v's
// client.
func (b *bench) queuePhase(ctx context.Context, v queue, bounds harness.Bounds) (harness.Phase, error) {
	measure := func(ctx context.Context, load func() (int64, error)) (harness.Phase, error) {
		return b.measureOn(ctx, v.hook, load)
	}
	return queues.Triples(ctx, measure, v.start, v.push, b.Workers, b.backlog, bounds)
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
