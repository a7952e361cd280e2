package delayqueue_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/conformance"
	"github.com/slotlimit/slotlimit/observe"
)

func TestConformance(t *testing.T) { conformanceRun(t, false) }

// The conformance suite holds too with each call sent alone.
func TestConformanceDisableCoalescing(t *testing.T) { conformanceRun(t, true) }

func conformanceRun(t *testing.T, off bool) {
	type q = delayqueue.Queue
	pushed := conformance.Hold[*q, string]{Name: "pushed", Take: func(ctx context.Context, q *q, _ string) (string, error) {
		return q.Push(ctx, []byte("p"), 0)
	}}
	delivered := conformance.Hold[*q, delayqueue.Message]{Name: "Message", Take: func(ctx context.Context, q *q, _ string) (delayqueue.Message, error) {
		if _, err := q.Push(ctx, []byte("p"), 0); err != nil {
			return delayqueue.Message{}, err
		}
		return q.Poll(ctx)
	}, Lose: func(ctx context.Context, q *q, m delayqueue.Message) (delayqueue.Message, error) {
		// An Ack made again before the lease's deadline answers as the
		// first; one after it finds the message no longer held.
		err := q.Ack(ctx, m)
		m.Deadline = m.Deadline.Add(-2 * time.Minute)
		return m, err
	}}
	dead := conformance.Hold[*q, string]{Name: "dead", Take: func(ctx context.Context, q *q, _ string) (string, error) {
		if _, err := q.Push(ctx, []byte("p"), 0); err != nil {
			return "", err
		}
		m, err := q.Poll(ctx)
		if err != nil {
			return "", err
		}
		return m.ID, q.Nack(ctx, m, 0) // its one attempt: dead
	}}
	conformance.Run(t, conformance.Package[*q]{
		Name:            "delayqueue",
		InvalidConfig:   delayqueue.ErrInvalidConfig,
		InvalidArgument: delayqueue.ErrInvalidArgument,
		NotHeld:         delayqueue.ErrNotHeld,
		Lapse:           time.Minute,
		New: func(client redis.UniversalClient, key string, obs observe.Observer) (*q, error) {
			return delayqueue.New(client, delayqueue.Config{Key: key, Visibility: time.Minute, MaxAttempts: 1, Observer: obs, DisableCoalescing: off})
		},
		Verbs: []conformance.Verb[*q]{
			conformance.Method("Push", conformance.Write, func(ctx context.Context, q *q, _ string) (any, error) {
				return q.Push(ctx, []byte("p"), 0, delayqueue.WithID("m1"))
			}),
			conformance.Method("PushAt", conformance.Write, func(ctx context.Context, q *q, _ string) (any, error) {
				return q.PushAt(ctx, []byte("p"), time.Unix(1e9, 0), delayqueue.WithID("m1"))
			}),
			conformance.Method("PushBatch", conformance.Write, func(ctx context.Context, q *q, _ string) (any, error) {
				return q.PushBatch(ctx, []delayqueue.Job{{ID: "m1", Payload: []byte("p")}})
			}),
			conformance.On(pushed, "Poll", conformance.Wait, func(ctx context.Context, q *q, id string) (any, error) {
				m, err := q.Poll(ctx)
				return m.ID == id && m.Attempt == 1, err
			}),
			conformance.On(delivered, "Ack", conformance.Release, func(ctx context.Context, q *q, m delayqueue.Message) (any, error) {
				return nil, q.Ack(ctx, m)
			}),
			conformance.On(delivered, "Nack", conformance.Release, func(ctx context.Context, q *q, m delayqueue.Message) (any, error) {
				return nil, q.Nack(ctx, m, 0)
			}),
			conformance.On(delivered, "Extend", conformance.Renew, func(ctx context.Context, q *q, m delayqueue.Message) (any, error) {
				return nil, q.Extend(ctx, m)
			}),
			conformance.On(dead, "Requeue", conformance.Write, func(ctx context.Context, q *q, id string) (any, error) {
				return q.Requeue(ctx, id)
			}),
			conformance.Again(conformance.On(dead, "Drop", conformance.Write, func(ctx context.Context, q *q, id string) (any, error) {
				return q.Drop(ctx, id)
			})),
			conformance.On(pushed, "Cancel", conformance.Write, func(ctx context.Context, q *q, id string) (any, error) {
				return q.Cancel(ctx, id)
			}),
			conformance.Method("Messages", conformance.Inspect, func(ctx context.Context, q *q, _ string) (any, error) {
				msgs, err := q.Messages(ctx, delayqueue.Ready, 0, 10)
				return len(msgs), err
			}),
			conformance.Method("Len", conformance.Inspect, func(ctx context.Context, q *q, _ string) (any, error) {
				ready, delayed, inflight, dead, err := q.Len(ctx)
				return [4]int64{ready, delayed, inflight, dead}, err
			}),
			conformance.Method("DeadLetters", conformance.Inspect, func(ctx context.Context, q *q, _ string) (any, error) {
				dead, err := q.DeadLetters(ctx, 10)
				return len(dead), err
			}),
			conformance.Method("Run", conformance.Loop, func(ctx context.Context, q *q, _ string) (any, error) {
				return nil, q.Run(ctx, 1, func(context.Context, delayqueue.Message) error { return nil })
			}),
		},
	})
}
