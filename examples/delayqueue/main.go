// Command delayqueue schedules jobs on a slotlimit delay queue, runs them
// with a pool of workers, and checks that each ran on time.
//
// Twenty reminders are scheduled at delays from 100ms to 2s. Four workers
// run them as they fall due: no reminder may run before its due time, by
// the server's clock, nor more than 50ms after it. One job fails on its
// first try and is retried after a backoff; one always fails, and lands
// in the dead-letter set after its three attempts.
//
// It ends with a verdict, PASS or FAIL, and exits 1 on FAIL.
//
// By default it runs on an embedded miniredis; -redis host:port runs it
// against a real server (loopback only).
//
//	go run ./examples/delayqueue
//	go run ./examples/delayqueue -redis 127.0.0.1:6379
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/exampleredis"
)

const (
	reminders = 20
	onTime    = 50 * time.Millisecond // the latest a reminder may run
)

func main() {
	log.SetFlags(0)
	addr := flag.String("redis", "", "Redis `host:port` (loopback); empty runs an embedded miniredis")
	flag.Parse()
	if err := run(*addr); err != nil {
		log.Printf("FAIL: %v", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	addr, stop, err := exampleredis.Open(addr)
	if err != nil {
		return err
	}
	defer stop()
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := fmt.Sprintf("example:delayqueue:%d", time.Now().UnixNano())
	q, err := delayqueue.New(client, delayqueue.Config{
		Key:         key,
		Visibility:  5 * time.Second,
		MaxAttempts: 3,
		Backoff:     func(attempt int) time.Duration { return 200 * time.Millisecond },
		// Run goes on through errors (Redis down, say); this shows them.
		OnError: func(err error) { log.Printf("queue: %v", err) },
	})
	if err != nil {
		return err
	}

	var jobs []delayqueue.Job
	for i := range reminders {
		delay := 100*time.Millisecond + time.Duration(i)*95*time.Millisecond
		jobs = append(jobs, delayqueue.Job{Payload: []byte(fmt.Sprintf("reminder %02d", i+1)), Delay: delay})
	}
	jobs = append(jobs,
		delayqueue.Job{Payload: []byte("flaky job"), Delay: 300 * time.Millisecond},
		delayqueue.Job{Payload: []byte("poison job"), Delay: 500 * time.Millisecond},
	)
	if _, err := q.PushBatch(ctx, jobs); err != nil {
		return err
	}
	fmt.Printf("scheduled %d reminders from 100ms to 2s ahead, a flaky job and a poison job; 4 workers\n", reminders)

	var mu sync.Mutex
	var late []time.Duration
	var early []string
	flakyTries := 0
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan error, 1)
	go func() {
		ran <- q.Run(runCtx, 4, func(ctx context.Context, m delayqueue.Message) error {
			// Lateness on the server's clock: the lease began at delivery.
			lateness := m.Deadline.Add(-5 * time.Second).Sub(m.DueAt)
			name := string(m.Payload)
			mu.Lock()
			defer mu.Unlock()
			switch name {
			case "flaky job":
				flakyTries++
				fmt.Printf("%-12s attempt %d, %v after due\n", name, m.Attempt, lateness)
				if m.Attempt == 1 {
					return errors.New("a transient failure")
				}
			case "poison job":
				fmt.Printf("%-12s attempt %d fails\n", name, m.Attempt)
				return errors.New("always fails")
			default:
				if lateness < 0 {
					early = append(early, name)
				}
				late = append(late, lateness)
				fmt.Printf("%-12s ran %v after due\n", name, lateness)
			}
			return nil
		})
	}()

	for {
		ready, delayed, inflight, dead, err := q.Len(ctx)
		if err != nil {
			return err
		}
		if ready+delayed+inflight == 0 && dead == 1 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("jobs left after 30s: %d ready, %d delayed, %d in flight", ready, delayed, inflight)
		case <-time.After(20 * time.Millisecond):
		}
	}
	stop()
	<-ran

	letters, err := q.DeadLetters(ctx, 10)
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
	switch {
	case len(late) != reminders:
		return fmt.Errorf("%d of %d reminders ran", len(late), reminders)
	case len(early) > 0:
		return fmt.Errorf("ran before due: %v", early)
	case late[len(late)-1] > onTime:
		return fmt.Errorf("a reminder ran %v after due, above %v", late[len(late)-1], onTime)
	case flakyTries != 2:
		return fmt.Errorf("the flaky job ran %d times, want 2", flakyTries)
	case len(letters) != 1 || string(letters[0].Payload) != "poison job" || letters[0].Attempt != 3:
		return fmt.Errorf("dead letters: %v, want the poison job after 3 attempts", letters)
	}
	if _, err := q.Drop(ctx, letters[0].ID); err != nil {
		return err
	}
	fmt.Printf("dead letters: %q after %d attempts (dropped)\n", letters[0].Payload, letters[0].Attempt)
	fmt.Printf("PASS: %d reminders ran on time (none early; median %v, latest %v after due), the flaky job was retried, the poison job was dead-lettered\n",
		reminders, late[len(late)/2], late[len(late)-1])
	return nil
}
