package delayqueue_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/delayqueue"
)

func Example() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	ctx := context.Background()

	q, err := delayqueue.New(client, delayqueue.Config{Key: "jobs:reminders", Visibility: 10 * time.Second})
	if err != nil {
		panic(err)
	}
	if _, err := q.Push(ctx, []byte("remind alice"), time.Minute); err != nil {
		panic(err)
	}
	mr.SetTime(time.Now().Add(time.Minute)) // a minute passes, on the server's clock

	m, err := q.Poll(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s, attempt %d\n", m.Payload, m.Attempt)
	if err := q.Ack(ctx, m); err != nil {
		panic(err)
	}
	// Output: remind alice, attempt 1
}
