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

// asynqForward is asynq's forwarder interval (DelayedTaskCheckInterval).
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
	push   func(ctx context.Context, payload []byte, delay time.Duration) error
	// start starts consumers, which call deliver as each task's handler
	// runs, before the task is acked, and returns stop, which stops them.
	start func(workers int, deliver func([]byte)) (stop func(), err error)
}

// queues returns the package's Queue and asynq, each on a client of its
// own.
func (b *bench) queues(name string) ([]queue, error) {
	lib := queue{name: nameQueue}
	lib.client, lib.hook = b.NewClient(0)
	q, err := delayqueue.New(lib.client, delayqueue.Config{Key: b.Key(name)})
	if err != nil {
		return nil, err
	}
	lib.push = func(ctx context.Context, payload []byte, delay time.Duration) error {
		_, err := q.Push(ctx, payload, delay)
		return err
	}
	lib.start = func(workers int, deliver func([]byte)) (func(), error) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			q.Run(ctx, workers, func(_ context.Context, m delayqueue.Message) error {
				deliver(m.Payload)
				return nil
			})
		}()
		return func() { cancel(); <-done }, nil
	}

	as := queue{name: nameAsynq}
	as.client, as.hook = b.NewClient(0)
	qname := b.Key(name + "-asynq")
	client := asynq.NewClientFromRedisClient(as.client)
	as.push = func(ctx context.Context, payload []byte, delay time.Duration) error {
		opts := []asynq.Option{asynq.Queue(qname)}
		if delay > 0 {
			opts = append(opts, asynq.ProcessIn(delay))
		}
		_, err := client.EnqueueContext(ctx, asynq.NewTask("costbench", payload), opts...)
		return err
	}
	as.start = func(workers int, deliver func([]byte)) (func(), error) {
		srv := asynq.NewServerFromRedisClient(as.client, asynq.Config{
			Concurrency:              workers,
			Queues:                   map[string]int{qname: 1},
			DelayedTaskCheckInterval: asynqForward,
			LogLevel:                 asynq.ErrorLevel,
		})
		err := srv.Start(asynq.HandlerFunc(func(_ context.Context, t *asynq.Task) error {
			deliver(t.Payload())
			return nil
		}))
		return srv.Shutdown, err
	}
	b.asynqQueues = append(b.asynqQueues, qname)
	return []queue{lib, as}, nil
}

// queueRow runs each delay queue's phase b.Rounds times, after a warm-up,
// the variants taking turns in every round.
func (b *bench) queueRow(ctx context.Context) ([][]result, error) {
	vs, err := b.queues("dq")
	if err != nil {
		return nil, err
	}
	out := make([]result, len(vs))
	warm := harness.Bounds{Workers: b.Workers, Duration: b.Duration, MaxOps: warmupCalls * int64(b.Workers)}
	for i, v := range vs {
		out[i] = result{name: v.name, callers: b.Workers}
		if _, err := b.queuePhase(ctx, v, warm); err != nil {
			return nil, fmt.Errorf("warm-up of %s: %w", v.name, err)
		}
	}
	for range b.Rounds {
		for i, v := range vs {
			ph, err := b.queuePhase(ctx, v, b.Bounds(b.Workers))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v.name, err)
			}
			out[i].rounds = append(out[i].rounds, phase{Phase: ph})
		}
	}
	return [][]result{out}, nil
}

// queuePhase is one measured phase of v: b.Workers consumers start, then
// bounds.Workers producers push tasks due at once, within bounds and
// never more than b.backlog ahead of the consumers, and the phase ends
// when every task pushed has been taken, within harness.Grace of the
// producers' end. Its operations are the tasks taken, and its commands
// every top-level command of v's client, its background work included.
func (b *bench) queuePhase(ctx context.Context, v queue, bounds harness.Bounds) (harness.Phase, error) {
	tokens := make(chan struct{}, b.backlog)
	var taken, seq atomic.Int64
	stop, err := v.start(b.Workers, func([]byte) {
		taken.Add(1)
		<-tokens
	})
	if err != nil {
		return harness.Phase{}, err
	}
	defer stop()
	saved := b.Hook
	b.Hook = v.hook // the steps run one at a time
	defer func() { b.Hook = saved }()
	return b.Measure(ctx, func() (int64, error) {
		pushed, err := harness.Drive(ctx, bounds, func(ctx context.Context, _ int) error {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			if err := v.push(ctx, binary.BigEndian.AppendUint64(nil, uint64(seq.Add(1))), 0); err != nil {
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
			time.Sleep(time.Millisecond)
		}
		if n := taken.Load(); n < pushed {
			return 0, fmt.Errorf("%d of %d tasks not taken within %v of the last push", pushed-n, pushed, harness.Grace)
		}
		return pushed, nil
	})
}

// dueRow is each queue's due-to-run latency: its b.Workers consumers
// start, b.Workers producers push b.tasks tasks as fast as they go, each
// due b.due after its push began, and each task's latency is the time its
// handler begins less its due time, for its first run, until every task
// has run or the phase's time is out.
func (b *bench) dueRow(ctx context.Context) ([][]result, error) {
	vs, err := b.queues("due")
	if err != nil {
		return nil, err
	}
	out := make([]result, len(vs))
	for i, v := range vs {
		lat, err := b.duePhase(ctx, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		q := lat.Quantiles(0.5, 0.99)
		out[i] = result{name: v.name, callers: b.Workers, rounds: []phase{{Phase: harness.Phase{Ops: int64(lat.Len())}, p50: q[0], p99: q[1]}}}
	}
	return [][]result{out}, nil
}

// dueTimeout bounds each due-to-run phase.
const dueTimeout = 30 * time.Second

func (b *bench) duePhase(ctx context.Context, v queue) (harness.Timings, error) {
	lat := make([]time.Duration, b.tasks)
	seen := make([]atomic.Bool, b.tasks)
	var delivered atomic.Int64
	all := make(chan struct{})
	stop, err := v.start(b.Workers, func(p []byte) {
		now := time.Now()
		if len(p) != 12 {
			return
		}
		i := int(binary.BigEndian.Uint32(p))
		if i >= len(seen) || seen[i].Swap(true) {
			return
		}
		lat[i] = now.Sub(time.Unix(0, int64(binary.BigEndian.Uint64(p[4:]))))
		if delivered.Add(1) == int64(len(seen)) {
			close(all)
		}
	})
	if err != nil {
		return nil, err
	}
	var next atomic.Int64
	_, err = harness.Drive(ctx, harness.Bounds{Workers: b.Workers, Duration: dueTimeout, MaxOps: int64(b.tasks)}, func(ctx context.Context, w int) error {
		i := next.Add(1) - 1
		due := time.Now().Add(b.due)
		p := binary.BigEndian.AppendUint32(nil, uint32(i))
		return v.push(ctx, binary.BigEndian.AppendUint64(p, uint64(due.UnixNano())), b.due)
	})
	if err == nil {
		timer := time.NewTimer(dueTimeout)
		select {
		case <-all:
		case <-timer.C:
			err = fmt.Errorf("%d of %d tasks ran within %v", delivered.Load(), b.tasks, dueTimeout)
		case <-ctx.Done():
			err = ctx.Err()
		}
		timer.Stop()
	}
	stop()
	var got []time.Duration
	for i := range seen {
		if seen[i].Load() {
			got = append(got, lat[i])
		}
	}
	return harness.Timings{got}, err
}

// cleanup takes the run's asynq queues off asynq's list of queues, a key
// outside the run's prefix; Env.Close deletes every other key of the run.
func (b *bench) cleanup(ctx context.Context) error {
	if len(b.asynqQueues) == 0 {
		return nil
	}
	return b.Admin.SRem(ctx, "asynq:queues", b.asynqQueues).Err()
}
