// Package queues holds what more than one benchmark command runs to
// measure a delay queue: a phase of tasks pushed, taken and acked under a
// bounded backlog, and hibiken/asynq as a peer. Only the commands that
// measure delay queues import it, so that asynq's packages reach no other
// command's build.
package queues

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// ModAsynq is the path of asynq's module, whose version a report names.
const ModAsynq = "github.com/hibiken/asynq"

// drainPoll is how often a phase checks whether its tasks are all taken.
const drainPoll = time.Millisecond

// Start starts workers consumers of a queue, which call deliver with each
// task's payload, and returns stop, which stops them and returns the first
// error one met.
type Start func(ctx context.Context, workers int, deliver func([]byte)) (stop func() error, err error)

// Push pushes a task, due at once.
type Push func(ctx context.Context, payload []byte) error

// Measure is harness.Env.Measure, or one like it: it runs load between a
// CONFIG RESETSTAT and a read of INFO commandstats.
type Measure func(ctx context.Context, load func() (int64, error)) (harness.Phase, error)

// Triples is one measured phase of a queue: start starts consumers of
// them, then bounds.Workers producers push, each payload a number of its
// own, within bounds and never more than backlog ahead of the consumers,
// and the phase ends when every task pushed has been taken, within
// harness.Grace of the producers' end. Its operations are the tasks
// taken.
func Triples(ctx context.Context, measure Measure, start Start, push Push, consumers, backlog int, bounds harness.Bounds) (harness.Phase, error) {
	tokens := make(chan struct{}, backlog)
	var taken, seq atomic.Int64
	stop, err := start(ctx, consumers, func([]byte) {
		taken.Add(1)
		<-tokens
	})
	if err != nil {
		return harness.Phase{}, err
	}
	ph, err := measure(ctx, func() (int64, error) {
		pushed, err := harness.Drive(ctx, bounds, func(ctx context.Context, _ int) error {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			if err := push(ctx, binary.BigEndian.AppendUint64(nil, uint64(seq.Add(1)))); err != nil {
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

// AsynqPush returns a push of asynq tasks of type taskType to the queue
// qname, on c: Client.Enqueue, with ProcessIn for a delay.
func AsynqPush(c *redis.Client, qname, taskType string) func(ctx context.Context, payload []byte, delay time.Duration) error {
	client := asynq.NewClientFromRedisClient(c)
	return func(ctx context.Context, payload []byte, delay time.Duration) error {
		opts := []asynq.Option{asynq.Queue(qname)}
		if delay > 0 {
			opts = append(opts, asynq.ProcessIn(delay))
		}
		_, err := client.EnqueueContext(ctx, asynq.NewTask(taskType, payload), opts...)
		return err
	}
}

// AsynqStart returns a Start of an asynq Server on c for the queue qname,
// of Concurrency workers, with its forwarder every interval (0: its
// default, 5 s) and every other setting at its default, whose handler
// passes each task's payload to deliver.
func AsynqStart(c *redis.Client, qname string, interval time.Duration) Start {
	return func(_ context.Context, workers int, deliver func([]byte)) (func() error, error) {
		srv := asynq.NewServerFromRedisClient(c, asynq.Config{
			Concurrency:              workers,
			Queues:                   map[string]int{qname: 1},
			DelayedTaskCheckInterval: interval,
			LogLevel:                 asynq.ErrorLevel,
		})
		err := srv.Start(asynq.HandlerFunc(func(_ context.Context, t *asynq.Task) error {
			deliver(t.Payload())
			return nil
		}))
		if err != nil {
			return nil, err
		}
		return func() error {
			srv.Shutdown()
			return nil
		}, nil
	}
}
