package delayqueue_test

import (
	"context"
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
// publishes one notice, naming one waiter, and that consumer takes it at
// once.
func TestPushWakesOneConsumer(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		q := newQueue(t, b, time.Minute, 0)
		channel := sideKey(q.Config().Key, "wake")
		var notices *redis.PubSub
		if cluster, ok := b.Client.(*redis.ClusterClient); ok {
			notices = cluster.SSubscribe(ctx, channel)
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
		time.Sleep(300 * time.Millisecond) // every consumer waits
		for i := range 5 {
			pushed := time.Now()
			id, err := q.Push(ctx, []byte("now"), 0)
			require.NoError(t, err)
			select {
			case m := <-got:
				assert.Equal(t, id, m.ID, "push %d", i)
				t.Logf("push %d delivered %v after it was sent", i, time.Since(pushed).Round(10*time.Microsecond))
				require.NoError(t, q.Ack(ctx, m))
			case <-time.After(time.Second):
				t.Fatalf("push %d was not delivered within a second", i)
			}
			woken := 0
			timeout := time.After(50 * time.Millisecond)
		count:
			for {
				select {
				case <-notices.Channel():
					woken++
				case <-timeout:
					break count
				}
			}
			assert.Equal(t, 1, woken, "push %d: notices", i)
		}
	})
}
