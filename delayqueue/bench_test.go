package delayqueue_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

var benchRuns atomic.Int64

// benchQueue returns a Queue on a real Redis, with a Key of its own whose
// keys are deleted when b ends, and its client.
func benchQueue(b *testing.B) (*delayqueue.Queue, *redis.Client) {
	client := redis.NewClient(&redis.Options{Addr: redistest.Addr(b)})
	key := fmt.Sprintf("dq-bench:%d", benchRuns.Add(1))
	b.Cleanup(func() {
		client.Del(context.Background(), allKeys(key)...)
		client.Close()
	})
	q, err := delayqueue.New(client, delayqueue.Config{Key: key, Visibility: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	return q, client
}

// BenchmarkPush measures Push of a 64-byte payload, due in an hour, one
// call at a time, beside a bare ZADD on the same client: the round trip
// the call cannot do without.
//
//	go test -run x -bench . -benchtime 2000x ./delayqueue
func BenchmarkPush(b *testing.B) {
	ctx := context.Background()
	payload := make([]byte, 64)
	b.Run("push", func(b *testing.B) {
		q, _ := benchQueue(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := q.Push(ctx, payload, time.Hour); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare zadd", func(b *testing.B) {
		_, client := benchQueue(b)
		key := fmt.Sprintf("dq-bench:zadd:%d", benchRuns.Add(1))
		b.Cleanup(func() { client.Del(ctx, key) })
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if err := client.ZAdd(ctx, key, redis.Z{Score: float64(i), Member: i}).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPushPollAck measures a message's life: Push, Poll and Ack,
// one at a time.
func BenchmarkPushPollAck(b *testing.B) {
	ctx := context.Background()
	payload := make([]byte, 64)
	q, _ := benchQueue(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := q.Push(ctx, payload, 0); err != nil {
			b.Fatal(err)
		}
		m, err := q.Poll(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := q.Ack(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
}
