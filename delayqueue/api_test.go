package delayqueue_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// New refuses a nil client, untyped or typed nil, with ErrInvalidConfig,
// and sends nothing, even given a client it could reach.
func TestNewRefusesNilClient(t *testing.T) {
	var typed *redis.Client
	for _, client := range []redis.UniversalClient{nil, typed, (*redis.ClusterClient)(nil), (*redis.Ring)(nil)} {
		q, err := delayqueue.New(client, delayqueue.Config{Key: "k"})
		assert.ErrorIs(t, err, delayqueue.ErrInvalidConfig, "%T", client)
		assert.Nil(t, q)
	}
	b := redistest.Miniredis(t)
	client, count := countedClient(t, b)
	_, err := delayqueue.New(client, delayqueue.Config{})
	assert.ErrorIs(t, err, delayqueue.ErrInvalidConfig)
	_, err = delayqueue.New(client, delayqueue.Config{Key: "k"})
	assert.NoError(t, err)
	assert.Zero(t, count.Commands(), "New sends nothing")
}

// ErrOutcomeUnknown is the module's one value.
func TestErrOutcomeUnknownIsShared(t *testing.T) {
	assert.ErrorIs(t, delayqueue.ErrOutcomeUnknown, slotlimit.ErrOutcomeUnknown)
	assert.ErrorIs(t, slotlimit.ErrOutcomeUnknown, delayqueue.ErrOutcomeUnknown)
}

// Every write whose reply is lost for good fails with an error matching
// ErrOutcomeUnknown; invalid input, ErrNotHeld and a Redis error reply
// do not match it.
func TestLostReplyIsOutcomeUnknown(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client, cutter := b.CutClient(t)
		require.NoError(t, delayqueue.LoadScripts(ctx, client))
		key := b.Key(t, "dq-test:")
		t.Cleanup(func() { b.Client.Del(ctx, allKeys(key)...) })
		q := newQueueOn(t, client, delayqueue.Config{Key: key, Visibility: time.Minute, MaxAttempts: 1})
		lose := func(op string, call func() error) {
			t.Helper()
			before := cutter.Cuts()
			cutter.Arm(10, "evalsha", delayqueue.ScriptHash(op), key)
			err := call()
			cutter.Arm(0)
			require.Greater(t, cutter.Cuts(), before, "the reply of %s was cut", op)
			assert.ErrorIs(t, err, delayqueue.ErrOutcomeUnknown, op)
			assert.ErrorIs(t, err, slotlimit.ErrOutcomeUnknown, op)
		}
		push := func() delayqueue.Message {
			t.Helper()
			_, err := q.Push(ctx, []byte("p"), 0)
			require.NoError(t, err)
			m, err := pollWithin(t, q, deliveredWithin)
			require.NoError(t, err)
			return m
		}
		lose("push", func() error { _, err := q.Push(ctx, []byte("a"), 0); return err })
		lose("push", func() error { _, err := q.PushAt(ctx, []byte("b"), time.Now()); return err })
		lose("push", func() error { _, err := q.PushBatch(ctx, []delayqueue.Job{{Payload: []byte("c")}}); return err })
		lose("poll", func() error { _, err := q.Poll(ctx); return err })
		for {
			ready, _, _, _, err := q.Len(ctx)
			require.NoError(t, err)
			if ready == 0 {
				break
			}
			m, err := pollWithin(t, q, deliveredWithin)
			require.NoError(t, err)
			require.NoError(t, q.Ack(ctx, m))
		}
		m := push()
		lose("extend", func() error { return q.Extend(ctx, m) })
		lose("ack", func() error { return q.Ack(ctx, m) })
		m = push()
		lose("nack", func() error { return q.Nack(ctx, m, 0) })
		dead, err := q.DeadLetters(ctx, 10)
		require.NoError(t, err)
		require.Len(t, dead, 1)
		lose("requeue", func() error { _, err := q.Requeue(ctx, dead[0].ID); return err })
		m = push()
		require.NoError(t, q.Nack(ctx, m, 0))
		lose("drop", func() error { _, err := q.Drop(ctx, m.ID); return err })

		// Known outcomes.
		_, err = q.Push(ctx, nil, -time.Second)
		assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument)
		assert.NotErrorIs(t, err, delayqueue.ErrOutcomeUnknown)
		err = q.Ack(ctx, delayqueue.Message{ID: m.ID, Token: "other"})
		assert.ErrorIs(t, err, delayqueue.ErrNotHeld)
		assert.NotErrorIs(t, err, delayqueue.ErrOutcomeUnknown)
		err = q.Extend(ctx, delayqueue.Message{})
		assert.ErrorIs(t, err, delayqueue.ErrNotHeld)
		assert.NotErrorIs(t, err, delayqueue.ErrOutcomeUnknown)
		idle := newQueue(t, b, time.Minute, 0)
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		_, err = idle.Poll(cancelled)
		assert.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, delayqueue.ErrOutcomeUnknown, "a Poll that sent nothing")
		// A Poll whose ctx ends once its registering call, the second, is
		// answered: it ends while it sleeps, whatever the machine's speed (a
		// deadline of its own could end it with a call on the wire).
		sleeping, stop := context.WithTimeout(ctx, 10*time.Second) // a bound for gross failures
		defer stop()
		hooked := b.NewClient(t)
		hooked.AddHook(&cancelOnReply{hash: delayqueue.ScriptHash("poll"), nth: 2, cancel: stop})
		require.NoError(t, delayqueue.LoadScripts(ctx, hooked))
		_, err = newQueueOn(t, hooked, idle.Config()).Poll(sleeping)
		assert.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, delayqueue.ErrOutcomeUnknown, "a Poll that ended while it slept")

		wrong := b.Key(t, "dq-test:")
		t.Cleanup(func() { b.Client.Del(ctx, wrong) })
		require.NoError(t, b.Client.Set(ctx, queueKey(wrong), "x", 0).Err())
		w := newQueueOn(t, b.Client, delayqueue.Config{Key: wrong})
		_, err = w.Push(ctx, nil, 0)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "WRONGTYPE")
		assert.NotErrorIs(t, err, delayqueue.ErrOutcomeUnknown)
		assert.False(t, errors.Is(err, delayqueue.ErrNotHeld))
	})
}

// cancelOnReply is a go-redis hook that calls cancel once the nth EVALSHA
// of the script hash has been answered, before its caller sees the reply.
type cancelOnReply struct {
	hash   string
	nth    int64
	cancel context.CancelFunc
	calls  atomic.Int64
}

func (h *cancelOnReply) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *cancelOnReply) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *cancelOnReply) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if args := cmd.Args(); cmd.Name() == "evalsha" && len(args) > 1 && args[1] == h.hash && h.calls.Add(1) == h.nth {
			h.cancel()
		}
		return err
	}
}
