package delayqueue_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// countedClient returns a client of b's server of its own, and the count
// of the commands it sends.
func countedClient(t *testing.T, b *redistest.Backend) (redis.UniversalClient, *redistest.CommandCounter) {
	client := b.NewClient(t)
	c := &redistest.CommandCounter{}
	client.AddHook(c)
	return client, c
}

// An idle consumer costs Redis about one command a second, on an empty
// queue and on one whose only message is due in an hour.
func TestIdleConsumerCommandRate(t *testing.T) {
	b := redistest.Redis(t)
	for _, farMessage := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		q := newQueue(t, b, time.Minute, 0)
		if farMessage {
			_, err := q.Push(ctx, []byte("later"), time.Hour)
			require.NoError(t, err)
		}
		client, count := countedClient(t, b)
		consumer := newQueueOn(t, client, q.Config())
		done := make(chan error, 1)
		go func() {
			_, err := consumer.Poll(ctx)
			done <- err
		}()
		time.Sleep(500 * time.Millisecond) // past the first poll and the subscription
		before := count.Commands()
		const window = 3 * time.Second
		time.Sleep(window)
		n := count.Commands() - before
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
		rate := float64(n) / window.Seconds()
		t.Logf("a message due in an hour: %v; an idle consumer sent %d commands in %v: %.2f a second", farMessage, n, window, rate)
		assert.LessOrEqual(t, rate, 1.25, "commands a second")
	}
}

// A push wakes one waiting consumer, not all: each push of a due message
// publishes one notice, naming one waiter, and a consumer takes it. The
// notices of a push are those the test's subscription reads before a
// marker the test publishes on the channel once the message was taken:
// messages on one channel arrive in the order they were published.
func TestPushWakesOneConsumer(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		q := newQueue(t, b, time.Minute, 0)
		channel := sideKey(q.Config().Key, "wake")
		var notices *redis.PubSub
		publish := b.Client.Publish
		if cluster, ok := b.Client.(*redis.ClusterClient); ok {
			notices = cluster.SSubscribe(ctx, channel)
			publish = cluster.SPublish
		} else {
			notices = b.Client.Subscribe(ctx, channel)
		}
		defer notices.Close()
		_, err := notices.Receive(ctx) // the subscription is confirmed
		require.NoError(t, err)
		const consumers = 8
		got := make(chan delayqueue.Message, consumers)
		var wg sync.WaitGroup
		for range consumers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				consumer := newQueueOn(t, b.NewClient(t), q.Config())
				for {
					m, err := consumer.Poll(ctx)
					if err != nil {
						return
					}
					got <- m
				}
			}()
		}
		defer wg.Wait()
		defer cancel()
		require.Eventually(t, func() bool { // every consumer waits
			n, err := b.Client.ZCard(ctx, sideKey(q.Config().Key, "waiters")).Result()
			return err == nil && n == consumers
		}, 10*time.Second, 5*time.Millisecond, "the consumers register as waiters")
		for i := range 5 {
			pushed := time.Now()
			id, err := q.Push(ctx, []byte("now"), 0)
			require.NoError(t, err)
			select {
			case m := <-got:
				assert.Equal(t, id, m.ID, "push %d", i)
				t.Logf("push %d delivered %v after it was sent", i, time.Since(pushed).Round(10*time.Microsecond))
				require.NoError(t, q.Ack(ctx, m))
			case <-time.After(10 * time.Second):
				t.Fatalf("push %d was not delivered within 10s", i)
			}
			marker := fmt.Sprintf("marker %d", i)
			require.NoError(t, publish(ctx, channel, marker).Err())
			woken := 0
		count:
			for {
				select {
				case msg := <-notices.Channel():
					if msg.Payload == marker {
						break count
					}
					woken++
				case <-time.After(10 * time.Second):
					t.Fatalf("push %d: the marker did not arrive within 10s", i)
				}
			}
			assert.Equal(t, 1, woken, "push %d: notices", i)
		}
	})
}
