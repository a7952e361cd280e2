package delayqueue_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// Every error returned before anything is sent names the package, the
// method and the queue's Key: a nil context, a bad argument; and a Queue
// not made by New names the package and the method.
func TestErrorsBeforeSendingNameMethodAndKey(t *testing.T) {
	b := redistest.Miniredis(t)
	client, count := countedClient(t, b)
	q := newQueueOn(t, client, delayqueue.Config{Key: "jobs"})
	ctx := context.Background()
	var nilCtx context.Context
	held := delayqueue.Message{ID: "x", Token: "y", Attempt: 1}
	handler := func(context.Context, delayqueue.Message) error { return nil }
	steps := []struct {
		prefix string
		call   func(q *delayqueue.Queue, ctx context.Context) error
	}{
		{`delayqueue: push "jobs": `, func(q *delayqueue.Queue, ctx context.Context) error { _, err := q.Push(ctx, nil, -1); return err }},
		{`delayqueue: push at "jobs": `, func(q *delayqueue.Queue, ctx context.Context) error {
			_, err := q.PushAt(ctx, nil, time.Time{})
			return err
		}},
		{`delayqueue: push batch "jobs": `, func(q *delayqueue.Queue, ctx context.Context) error {
			_, err := q.PushBatch(ctx, []delayqueue.Job{{Delay: -1}})
			return err
		}},
		{`delayqueue: nack "jobs": `, func(q *delayqueue.Queue, ctx context.Context) error { return q.Nack(ctx, held, -1) }},
		{`delayqueue: dead letters "jobs": `, func(q *delayqueue.Queue, ctx context.Context) error {
			_, err := q.DeadLetters(ctx, 0)
			return err
		}},
		{`delayqueue: requeue "jobs": `, func(q *delayqueue.Queue, ctx context.Context) error {
			_, err := q.Requeue(ctx, make([]string, delayqueue.MaxBatch+1)...)
			return err
		}},
		{`delayqueue: drop "jobs": `, func(q *delayqueue.Queue, ctx context.Context) error {
			_, err := q.Drop(ctx, make([]string, delayqueue.MaxBatch+1)...)
			return err
		}},
		{`delayqueue: run "jobs": `, func(q *delayqueue.Queue, ctx context.Context) error { return q.Run(ctx, 0, handler) }},
	}
	for i, s := range steps {
		err := s.call(q, ctx)
		assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument, "step %d", i)
		assert.True(t, strings.HasPrefix(err.Error(), s.prefix), "step %d: %q", i, err)
		err = s.call(q, nilCtx)
		assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument, "step %d: nil ctx", i)
		assert.True(t, strings.HasPrefix(err.Error(), s.prefix), "step %d: nil ctx: %q", i, err)
		method := strings.TrimSuffix(strings.SplitN(s.prefix, ` "`, 2)[0], " ")
		for _, z := range []*delayqueue.Queue{nil, new(delayqueue.Queue)} {
			err = s.call(z, ctx)
			assert.ErrorIs(t, err, delayqueue.ErrInvalidConfig, "step %d: zero Queue", i)
			assert.True(t, strings.HasPrefix(err.Error(), method+": "), "step %d: zero Queue: %q", i, err)
		}
	}
	for method, call := range map[string]func(ctx context.Context) error{
		"poll":   func(ctx context.Context) error { _, err := q.Poll(ctx); return err },
		"ack":    func(ctx context.Context) error { return q.Ack(ctx, held) },
		"extend": func(ctx context.Context) error { return q.Extend(ctx, held) },
		"len": func(ctx context.Context) error {
			_, _, _, _, err := q.Len(ctx)
			return err
		},
	} {
		err := call(nilCtx)
		assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument, method)
		assert.True(t, strings.HasPrefix(err.Error(), `delayqueue: `+method+` "jobs": `), "%s: %q", method, err)
	}
	assert.Zero(t, count.Commands(), "nothing was sent")
}

// New refuses, with ErrInvalidConfig, a Key that is the name of a key
// another package keeps beside its own: the queue would meet its data.
func TestNewRefusesAnotherPackagesKey(t *testing.T) {
	b := redistest.Miniredis(t)
	for _, key := range []string{"{k}/recent", "{k}/lock:q", "{k}:ratelimit", "{k}/delayqueue:leases", "{k}/w"} {
		q, err := delayqueue.New(b.Client, delayqueue.Config{Key: key})
		assert.ErrorIs(t, err, delayqueue.ErrInvalidConfig, key)
		assert.Nil(t, q, key)
	}
}

// A Message not made by Poll (a zero one, one without a Token such as a
// dead letter's) given to Ack, Nack or Extend is a mistake in the code:
// ErrInvalidConfig, not ErrNotHeld, with nothing sent.
func TestMessageNotMadeByPoll(t *testing.T) {
	b := redistest.Miniredis(t)
	client, count := countedClient(t, b)
	q := newQueueOn(t, client, delayqueue.Config{Key: "jobs"})
	ctx := context.Background()
	for _, m := range []delayqueue.Message{{}, {ID: "x", Attempt: 3}, {Token: "y"}} {
		for method, call := range map[string]func() error{
			"ack":    func() error { return q.Ack(ctx, m) },
			"nack":   func() error { return q.Nack(ctx, m, 0) },
			"extend": func() error { return q.Extend(ctx, m) },
		} {
			err := call()
			require.Error(t, err, method)
			assert.ErrorIs(t, err, delayqueue.ErrInvalidConfig, "%s %+v", method, m)
			assert.NotErrorIs(t, err, delayqueue.ErrNotHeld, "%s %+v", method, m)
			assert.True(t, strings.HasPrefix(err.Error(), `delayqueue: `+method+` "jobs": `), "%s: %q", method, err)
		}
	}
	assert.Zero(t, count.Commands(), "nothing was sent")
}

// A Push refuses a bad WithID only on a Queue made by New and with a
// context: a nil or zero Queue, or a nil ctx, is the error every call
// gives, and nothing panics. A single Push's error names no job; a
// batch's names the job.
func TestPushChecksTheQueueBeforeItsOptions(t *testing.T) {
	var nilQueue *delayqueue.Queue
	_, err := nilQueue.Push(context.Background(), nil, 0, delayqueue.WithID(""))
	require.ErrorIs(t, err, delayqueue.ErrInvalidConfig)
	_, err = new(delayqueue.Queue).PushAt(context.Background(), nil, time.Now(), delayqueue.WithID(""))
	require.ErrorIs(t, err, delayqueue.ErrInvalidConfig)

	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	q, err := delayqueue.New(client, delayqueue.Config{Key: "jobs"})
	require.NoError(t, err)
	var nilCtx context.Context
	_, err = q.Push(nilCtx, nil, 0, delayqueue.WithID(""))
	require.ErrorIs(t, err, delayqueue.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "nil context")

	_, err = q.Push(context.Background(), make([]byte, delayqueue.MaxPayload+1), 0)
	assert.Equal(t, `delayqueue: push "jobs": invalid argument: payload of 1048577 bytes, above MaxPayload 1048576`, err.Error())
	_, err = q.PushBatch(context.Background(), []delayqueue.Job{{}, {Payload: make([]byte, delayqueue.MaxPayload+1)}})
	assert.Equal(t, `delayqueue: push batch "jobs": invalid argument: job 1: payload of 1048577 bytes, above MaxPayload 1048576`, err.Error())
}
