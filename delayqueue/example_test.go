package delayqueue_test

import (
	"context"
	"errors"
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

// A message given back by Nack is delivered again, its Attempt counted;
// after MaxAttempts deliveries it goes to the dead letters, where an
// operator can requeue it once the fault is fixed.
func ExampleQueue_Nack() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	mr.SetTime(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)) // a clock that stands still
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	q, err := delayqueue.New(client, delayqueue.Config{Key: "jobs:emails", MaxAttempts: 2})
	if err != nil {
		panic(err)
	}
	id, err := q.Push(ctx, []byte("welcome mail"), 0) // due now
	if err != nil {
		panic(err)
	}
	for range 2 {
		m, err := q.Poll(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: attempt %d failed\n", m.Payload, m.Attempt)
		if err := q.Nack(ctx, m, 0); err != nil { // due again at once
			panic(err)
		}
	}
	ready, delayed, inflight, dead, err := q.Len(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("ready", ready, "delayed", delayed, "in flight", inflight, "dead", dead)
	letters, err := q.DeadLetters(ctx, 10)
	if err != nil {
		panic(err)
	}
	fmt.Printf("dead letter: %s after %d attempts, the one pushed: %v\n", letters[0].Payload, letters[0].Attempt, letters[0].ID == id)

	n, err := q.Requeue(ctx, id)
	if err != nil {
		panic(err)
	}
	m, err := q.Poll(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("requeued %d; %s: attempt %d\n", n, m.Payload, m.Attempt)
	if err := q.Ack(ctx, m); err != nil {
		panic(err)
	}

	// Output:
	// welcome mail: attempt 1 failed
	// welcome mail: attempt 2 failed
	// ready 0 delayed 0 in flight 0 dead 1
	// dead letter: welcome mail after 2 attempts, the one pushed: true
	// requeued 1; welcome mail: attempt 1
}

// A message pushed with the caller's ID is queued once, however often the
// push is made: after an error matching ErrOutcomeUnknown, push again
// with the same ID, and take ErrDuplicate as "it is queued".
func ExampleWithID() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	ctx := context.Background()

	q, err := delayqueue.New(client, delayqueue.Config{Key: "jobs:invoices"})
	if err != nil {
		panic(err)
	}
	push := func() error {
		_, err := q.Push(ctx, []byte("invoice 42"), time.Hour, delayqueue.WithID("invoice-42"))
		if errors.Is(err, delayqueue.ErrDuplicate) {
			return nil // queued by an earlier push
		}
		return err
	}
	for range 3 {
		if err := push(); err != nil {
			panic(err)
		}
	}
	_, delayed, _, _, err := q.Len(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("delayed", delayed)
	// Output: delayed 1
}
