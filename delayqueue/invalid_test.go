package delayqueue_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// Bad configs and bad arguments return clear errors, with nothing sent,
// and never panic. (The conformance suite checks nil clients and nil and
// zero values.)
func TestBadInputSendsNothing(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	for _, cfg := range []delayqueue.Config{
		{},
		{Key: "k", Visibility: -time.Second},
		{Key: "k", Visibility: time.Microsecond},
		{Key: "k", MaxAttempts: -1},
		{Key: "a}b"},
	} {
		_, err := delayqueue.New(b.Client, cfg)
		assert.ErrorIs(t, err, delayqueue.ErrInvalidConfig, "%+v", cfg)
	}

	client, count := countedClient(t, b)
	q := newQueueOn(t, client, delayqueue.Config{Key: b.Key(t, "dq-test:")})
	huge := make([]byte, delayqueue.MaxPayload+1)
	big := make([]byte, delayqueue.MaxPayload)
	var tooMany, tooBig []delayqueue.Job
	for range delayqueue.MaxBatch + 1 {
		tooMany = append(tooMany, delayqueue.Job{})
	}
	for range delayqueue.MaxBatchBytes/delayqueue.MaxPayload + 1 {
		tooBig = append(tooBig, delayqueue.Job{Payload: big})
	}
	held := delayqueue.Message{ID: "x", Attempt: 1}
	for name, call := range map[string]func() error{
		"negative delay":    func() error { _, err := q.Push(ctx, nil, -time.Millisecond); return err },
		"delay too long":    func() error { _, err := q.Push(ctx, nil, delayqueue.MaxDelay+time.Hour); return err },
		"payload too large": func() error { _, err := q.Push(ctx, huge, 0); return err },
		"zero time":         func() error { _, err := q.PushAt(ctx, nil, time.Time{}); return err },
		"time before 1970":  func() error { _, err := q.PushAt(ctx, nil, time.Unix(-5, 0)); return err },
		"batch too long":    func() error { _, err := q.PushBatch(ctx, tooMany); return err },
		"batch too large":   func() error { _, err := q.PushBatch(ctx, tooBig); return err },
		"nack delay":        func() error { return q.Nack(ctx, held, -time.Second) },
		"dead letters n":    func() error { _, err := q.DeadLetters(ctx, 0); return err },
		"requeue too many":  func() error { _, err := q.Requeue(ctx, make([]string, delayqueue.MaxBatch+1)...); return err },
		"no workers":        func() error { return q.Run(ctx, 0, func(context.Context, delayqueue.Message) error { return nil }) },
		"nil handler":       func() error { return q.Run(ctx, 1, nil) },
	} {
		assert.ErrorIs(t, call(), delayqueue.ErrInvalidArgument, name)
	}
	ids, err := q.PushBatch(ctx, nil)
	assert.NoError(t, err)
	assert.Empty(t, ids)
	n, err := q.Requeue(ctx)
	assert.NoError(t, err)
	assert.Zero(t, n)
	assert.Zero(t, count.Commands(), "nothing was sent")

	for _, z := range []*delayqueue.Queue{nil, new(delayqueue.Queue)} {
		assert.Equal(t, delayqueue.Config{}, z.Config())
	}
}

// A key of the queue's that holds another type fails every call that
// writes with WRONGTYPE, and is left as it was.
func TestWrongTypeLeavesKeysUntouched(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		for _, which := range []string{"queue", "bodies"} {
			q := newQueue(t, b, time.Minute, 0)
			key := queueKey(q.Config().Key)
			if which == "bodies" {
				key = sideKey(q.Config().Key, "bodies")
			}
			require.NoError(t, b.Client.RPush(ctx, key, "x").Err())
			_, err := q.Push(ctx, []byte("p"), 0)
			require.Error(t, err, which)
			assert.Contains(t, err.Error(), "WRONGTYPE", which)
			_, err = pollWithin(t, q, time.Second)
			assert.Contains(t, err.Error(), "WRONGTYPE", which)
			assert.Equal(t, []string{"x"}, b.Client.LRange(ctx, key, 0, -1).Val(), which)
			assert.Empty(t, existing(t, b, q.Config().Key)[1:], "%s: nothing else was written", which)
		}
	})
}

// A Redis that is down fails each call with an error, at once; a ctx
// that ends stops Poll with ctx's error.
func TestRedisDownAndContext(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer client.Close()
	q := newQueueOn(t, client, delayqueue.Config{Key: "k"})
	ctx := context.Background()
	_, err := q.Push(ctx, nil, 0)
	assert.Error(t, err)
	_, err = q.Poll(ctx)
	assert.Error(t, err)
	assert.False(t, errors.Is(err, delayqueue.ErrNotHeld))
	_, _, _, _, err = q.Len(ctx)
	assert.Error(t, err)

	b := redistest.Miniredis(t)
	q = newQueue(t, b, time.Minute, 0)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = q.Poll(cancelled)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = pollWithin(t, q, 50*time.Millisecond)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// Config values the scripts cannot hold exactly are refused by New, and
// times they cannot hold by PushAt, with nothing sent.
func TestUnrepresentableValuesRefused(t *testing.T) {
	b := redistest.Miniredis(t)
	for _, cfg := range []delayqueue.Config{
		{Key: "k", Visibility: delayqueue.MaxDelay + time.Millisecond},
		{Key: "k", Visibility: math.MaxInt64},
		{Key: "k", MaxAttempts: math.MaxInt32 + 1},
		{Key: "k", MaxAttempts: math.MaxInt},
	} {
		_, err := delayqueue.New(b.Client, cfg)
		assert.ErrorIs(t, err, delayqueue.ErrInvalidConfig, "%+v", cfg)
	}
	q, err := delayqueue.New(b.Client, delayqueue.Config{Key: "k", Visibility: delayqueue.MaxDelay, MaxAttempts: math.MaxInt32})
	require.NoError(t, err, "the largest values are taken")
	ctx := context.Background()
	client, count := countedClient(t, b)
	q = newQueueOn(t, client, q.Config())
	for _, at := range []time.Time{time.UnixMilli(1 << 53).Add(time.Millisecond), time.Unix(math.MaxInt64, 0), time.Unix(1<<62, 0)} {
		_, err := q.PushAt(ctx, nil, at)
		assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument, "%v", at)
	}
	assert.Zero(t, count.Commands(), "nothing was sent")
}

// An error names the method that failed and the package, once.
func TestErrorsNameTheMethodOnce(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	q := newQueueOn(t, b.Client, delayqueue.Config{Key: "k"})
	_, err := q.Push(ctx, nil, -time.Second)
	assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument)
	assert.EqualError(t, err, `delayqueue: push "k": invalid argument: delay -1s is not within [0, 87600h0m0s]`)
	err = q.Nack(ctx, delayqueue.Message{}, -time.Second)
	assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument)
	assert.True(t, strings.HasPrefix(err.Error(), `delayqueue: nack "k": invalid argument`), err.Error())
	_, err = q.DeadLetters(ctx, 0)
	assert.True(t, strings.HasPrefix(err.Error(), `delayqueue: dead letters "k": invalid argument`), err.Error())
	_, err = q.Requeue(ctx, make([]string, delayqueue.MaxBatch+1)...)
	assert.True(t, strings.HasPrefix(err.Error(), `delayqueue: requeue "k": invalid argument`), err.Error())
	err = q.Run(ctx, 0, nil)
	assert.True(t, strings.HasPrefix(err.Error(), `delayqueue: run "k": invalid argument`), err.Error())
	_, err = q.PushAt(ctx, nil, time.Time{})
	assert.True(t, strings.HasPrefix(err.Error(), `delayqueue: push at "k": invalid argument`), err.Error())
}

// An entry in the layout of an earlier release, whose queues must be
// drained before upgrading, fails Poll with an error that says so, and
// nothing is delivered.
func TestEarlierReleaseEntryRefused(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := newQueue(t, b, time.Minute, 0)
		old := "1732500000000-000001 ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		require.NoError(t, b.Client.ZAdd(ctx, queueKey(q.Config().Key), redis.Z{Score: 1, Member: old}).Err())
		_, err := pollWithin(t, q, time.Second)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "drain the queue")
		assert.Equal(t, [4]int64{1, 0, 0, 0}, lens(t, q), "nothing was delivered")
	})
}
