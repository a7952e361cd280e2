package delayqueue_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// Run acks what its handler finishes, gives back what fails or panics
// after Config.Backoff, dead-letters it after MaxAttempts, keeps the lease
// of a handler that outlasts the Visibility alive (no other worker gets
// its message), and returns ctx's error once its handlers are done.
func TestRunRetriesKeepsAliveAndDeadLetters(t *testing.T) {
	b := redistest.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const vis, backoff = 300 * time.Millisecond, 100 * time.Millisecond
	key := b.Key(t, "dq-test:")
	t.Cleanup(func() { b.Client.Del(context.Background(), allKeys(key)...) })
	q := newQueueOn(t, b.Client, delayqueue.Config{
		Key: key, Visibility: vis, MaxAttempts: 3,
		Backoff: func(attempt int) time.Duration { return time.Duration(attempt) * backoff },
	})
	var mu sync.Mutex
	deliveries := map[string][]time.Time{}
	handlerErr := map[string]error{}
	done := make(chan string, 10)
	handler := func(ctx context.Context, m delayqueue.Message) error {
		mu.Lock()
		deliveries[string(m.Payload)] = append(deliveries[string(m.Payload)], time.Now())
		mu.Unlock()
		switch string(m.Payload) {
		case "flaky": // fails twice, then succeeds
			if m.Attempt < 3 {
				return errors.New("not yet")
			}
		case "panics":
			if m.Attempt == 1 {
				panic("boom")
			}
		case "slow": // outlasts its Visibility three times over
			select {
			case <-time.After(3 * vis):
			case <-ctx.Done():
				mu.Lock()
				handlerErr["slow"] = context.Cause(ctx)
				mu.Unlock()
				return ctx.Err()
			}
		case "poison":
			err := errors.New("always fails")
			if m.Attempt == 3 {
				done <- "poison"
			}
			return err
		}
		done <- string(m.Payload)
		return nil
	}
	for _, p := range []string{"flaky", "panics", "slow", "poison"} {
		_, err := q.Push(ctx, []byte(p), 0)
		require.NoError(t, err)
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- q.Run(runCtx, 4, handler) }()
	finished := map[string]bool{}
	for len(finished) < 4 {
		select {
		case p := <-done:
			finished[p] = true
		case <-ctx.Done():
			t.Fatalf("only %v finished", finished)
		}
	}
	require.Eventually(t, func() bool {
		ready, delayed, inflight, dead, err := q.Len(ctx)
		return err == nil && ready+delayed+inflight == 0 && dead == 1
	}, 5*time.Second, 10*time.Millisecond, "acked, and the poison dead-lettered")
	stop()
	assert.ErrorIs(t, <-ran, context.Canceled)

	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, deliveries["flaky"], 3)
	for i := 1; i < len(deliveries["flaky"]); i++ {
		gap := deliveries["flaky"][i].Sub(deliveries["flaky"][i-1])
		assert.GreaterOrEqual(t, gap, time.Duration(i)*backoff-5*time.Millisecond, "backoff before attempt %d", i+1)
	}
	assert.Len(t, deliveries["panics"], 2, "a panic counts as a failure")
	assert.Len(t, deliveries["slow"], 1, "its lease was kept alive: no other worker got it")
	assert.NoError(t, handlerErr["slow"])
	assert.Len(t, deliveries["poison"], 3)
	letters, err := q.DeadLetters(context.Background(), 10)
	require.NoError(t, err)
	require.Len(t, letters, 1)
	assert.Equal(t, "poison", string(letters[0].Payload))
	assert.Equal(t, 3, letters[0].Attempt)
}

// Run against a Redis that is down tells Config.OnError of each failed
// Poll, and keeps trying, until its ctx ends.
func TestRunReportsErrors(t *testing.T) {
	s := redistest.StartServer(t)
	client := redis.NewClient(&redis.Options{Addr: s.Addr, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { client.Close() })
	errs := make(chan error, 100)
	q := newQueueOn(t, client, delayqueue.Config{Key: "dq-test:down", OnError: func(err error) {
		select {
		case errs <- err:
		default:
		}
	}})
	s.Kill()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() {
		ran <- q.Run(ctx, 2, func(context.Context, delayqueue.Message) error { return nil })
	}()
	for i := range 2 {
		select {
		case err := <-errs:
			assert.Contains(t, err.Error(), `delayqueue: poll "dq-test:down"`)
		case <-time.After(20 * time.Second):
			t.Fatalf("OnError was not called %d times", i+1)
		}
	}
	cancel()
	select {
	case err := <-ran:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return when its ctx ended")
	}
}
