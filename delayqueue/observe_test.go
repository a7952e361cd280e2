package delayqueue_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/observe"
)

// The Observer is told of each call's outcome once, as its last event,
// with the method's name, the queue's Key and the holder the doc names.
func TestObserverReportsEachCallOnce(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rec := &observetest.Recorder{}
		key := b.Key(t, "dq-test:")
		t.Cleanup(func() { b.Client.Del(ctx, allKeys(key)...) })
		q := newQueueOn(t, b.Client, delayqueue.Config{Key: key, Visibility: time.Minute, MaxAttempts: 1, Observer: rec})
		one := func(op string, kind observe.Kind, holder string, units int64) observe.Event {
			t.Helper()
			events := rec.Take()
			require.Len(t, events, 1, "%s: %v", op, observetest.Kinds(events))
			e := events[0]
			assert.Equal(t, kind, e.Kind, op)
			assert.Equal(t, "delayqueue", e.Package, op)
			assert.Equal(t, op, e.Op)
			assert.Equal(t, key, e.Key, op)
			assert.Equal(t, holder, e.Holder, op)
			assert.Equal(t, units, e.Units, op)
			assert.False(t, e.Start.IsZero(), op)
			return e
		}

		id, err := q.Push(ctx, []byte("a"), 0)
		require.NoError(t, err)
		one("Push", observe.Done, id, 1)
		_, err = q.PushBatch(ctx, []delayqueue.Job{{Payload: []byte("b")}, {Payload: []byte("c")}})
		require.NoError(t, err)
		one("PushBatch", observe.Done, "", 2)
		id, err = q.PushAt(ctx, []byte("d"), time.Now())
		require.NoError(t, err)
		one("PushAt", observe.Done, id, 1)
		_, err = q.Push(ctx, nil, -time.Second)
		require.Error(t, err)
		assert.Empty(t, rec.Take(), "a call refused before it was sent reports nothing")
		_, err = q.Push(ctx, []byte("e"), time.Hour, delayqueue.WithID("e"))
		require.NoError(t, err)
		one("Push", observe.Done, "e", 1)
		_, err = q.Push(ctx, []byte("e"), time.Hour, delayqueue.WithID("e"))
		require.ErrorIs(t, err, delayqueue.ErrDuplicate)
		one("Push", observe.Refused, "e", 1) // queued already: nothing pushed
		_, err = q.PushBatch(ctx, []delayqueue.Job{{Payload: []byte("e"), ID: "e"}, {Payload: []byte("f"), ID: "f", Delay: time.Hour}})
		require.ErrorIs(t, err, delayqueue.ErrDuplicate)
		one("PushBatch", observe.Done, "", 2) // one pushed

		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		one("Poll", observe.Acquired, m.Token, 1)
		require.NoError(t, q.Extend(ctx, m))
		assert.True(t, one("Extend", observe.Renewed, m.Token, 1).Held)
		require.NoError(t, q.Ack(ctx, m))
		assert.True(t, one("Ack", observe.Released, m.Token, 1).Held)
		stale := delayqueue.Message{ID: m.ID, Token: "stale"}
		require.ErrorIs(t, q.Ack(ctx, stale), delayqueue.ErrNotHeld)
		assert.False(t, one("Ack", observe.Released, "stale", 1).Held)
		require.ErrorIs(t, q.Extend(ctx, stale), delayqueue.ErrNotHeld)
		assert.False(t, one("Extend", observe.Renewed, "stale", 1).Held)

		m, err = pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		one("Poll", observe.Acquired, m.Token, 1)
		require.NoError(t, q.Nack(ctx, m, 0))
		assert.True(t, one("Nack", observe.Released, m.Token, 1).Held)
		n, err := q.Requeue(ctx, m.ID, "other")
		require.NoError(t, err)
		require.Equal(t, 1, n)
		one("Requeue", observe.Done, "", 2)
		for lens(t, q)[0] > 0 {
			m, err = pollWithin(t, q, deliveredWithin)
			require.NoError(t, err)
			require.NoError(t, q.Nack(ctx, m, 0))
		}
		rec.Take()
		n, err = q.Drop(ctx, m.ID)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		one("Drop", observe.Done, "", 1)
		_, _, _, _, err = q.Len(ctx)
		require.NoError(t, err)
		assert.Empty(t, rec.Take(), "a read reports nothing")

		_, err = pollWithin(t, q, 100*time.Millisecond)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		events := rec.Take()
		require.Equal(t, []observe.Kind{observe.Waited, observe.Error}, observetest.Kinds(events))
		assert.Equal(t, events[0].Holder, events[1].Holder)
		assert.ErrorIs(t, events[1].Err, context.DeadlineExceeded)

		wrong := b.Key(t, "dq-test:")
		t.Cleanup(func() { b.Client.Del(ctx, wrong) })
		require.NoError(t, b.Client.Set(ctx, queueKey(wrong), "x", 0).Err())
		w := newQueueOn(t, b.Client, delayqueue.Config{Key: wrong, Observer: rec})
		_, err = w.Push(ctx, nil, 0)
		require.Error(t, err)
		events = rec.Take()
		require.Equal(t, []observe.Kind{observe.Error}, observetest.Kinds(events))
		assert.Equal(t, err, events[0].Err)
	})
}

// Run reports a LeaseLost when the lease of a message its handler works
// on is found gone, naming the delivery's Token.
func TestObserverLeaseLostInRun(t *testing.T) {
	b := redistest.Redis(t)
	ctx := context.Background()
	rec := &observetest.Recorder{}
	key := b.Key(t, "dq-test:")
	t.Cleanup(func() { b.Client.Del(ctx, allKeys(key)...) })
	q := newQueueOn(t, b.Client, delayqueue.Config{Key: key, Visibility: 300 * time.Millisecond, Observer: rec})
	_, err := q.Push(ctx, []byte("a"), 0)
	require.NoError(t, err)
	run, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	token := make(chan string, 1)
	go q.Run(run, 1, func(hctx context.Context, m delayqueue.Message) error { //nolint:errcheck
		require.NoError(t, q.Ack(ctx, m)) // the lease is gone under the keep-alive
		<-hctx.Done()
		assert.ErrorIs(t, context.Cause(hctx), delayqueue.ErrNotHeld)
		token <- m.Token
		stop()
		return nil
	})
	var tok string
	select {
	case tok = <-token:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler's ctx was not cancelled")
	}
	time.Sleep(100 * time.Millisecond)
	var lost []observe.Event
	for _, e := range rec.Take() {
		if e.Kind == observe.LeaseLost {
			lost = append(lost, e)
		}
	}
	require.Len(t, lost, 1)
	assert.Equal(t, tok, lost[0].Holder)
	assert.ErrorIs(t, lost[0].Err, delayqueue.ErrNotHeld)
}
