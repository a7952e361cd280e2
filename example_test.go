package slotlimit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit"
)

// exampleRedis starts an in-process Redis at a fixed time, so the examples'
// output does not depend on the clock. Real code passes its own client.
func exampleRedis() (*redis.Client, *miniredis.Miniredis) {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	mr.SetTime(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	return redis.NewClient(&redis.Options{Addr: mr.Addr()}), mr
}

// A device reports; if a slot is free it gets a task, and its slot is freed
// when it reports the task's result. At most 60 devices of one area call the
// external system at once, across every instance of the service.
func Example() {
	client, mr := exampleRedis()
	defer mr.Close()
	ctx := context.Background()

	limiter, err := slotlimit.New(client, slotlimit.Config{Key: "ar:0571", Limit: 60})
	if err != nil {
		panic(err)
	}

	// On a device's report:
	res, err := limiter.TryAcquire(ctx, "device-42")
	if err != nil {
		panic(err) // Redis is unreachable: hand out no task this time.
	}
	if res.Acquired {
		fmt.Printf("device-42 gets the task (%d of %d slots in use)\n", res.Count, res.Limit)
	}

	// On the device's result report:
	err = limiter.Release(ctx, "device-42")
	switch {
	case errors.Is(err, slotlimit.ErrNotHeld):
		fmt.Println("device-42 held no slot") // a report that came too late
	case err != nil:
		panic(err)
	default:
		fmt.Println("slot released")
	}

	// Output:
	// device-42 gets the task (1 of 60 slots in use)
	// slot released
}

// When every slot is taken, TryAcquire says so, and when to come back.
func ExampleLimiter_TryAcquire() {
	client, mr := exampleRedis()
	defer mr.Close()
	ctx := context.Background()

	limiter, err := slotlimit.New(client, slotlimit.Config{Key: "ar:0571", Limit: 2, TTL: time.Minute})
	if err != nil {
		panic(err)
	}
	for _, device := range []string{"device-1", "device-2", "device-3", "device-1"} {
		res, err := limiter.TryAcquire(ctx, device)
		if err != nil {
			panic(err)
		}
		if res.Acquired {
			fmt.Printf("%s: slot held until %s, %d/%d in use\n", device, res.ExpiresAt.UTC().Format(time.TimeOnly), res.Count, res.Limit)
		} else {
			fmt.Printf("%s: all %d slots taken, retry in %v (a lease lapses in %v)\n", device, res.Limit, res.RetryAfter(), res.EarliestLapse)
		}
	}

	// Output:
	// device-1: slot held until 12:01:00, 1/2 in use
	// device-2: slot held until 12:01:00, 2/2 in use
	// device-3: all 2 slots taken, retry in 1s (a lease lapses in 1m0s)
	// device-1: slot held until 12:01:00, 2/2 in use
}

// A worker waits for a slot, and frees it when its work is done.
func ExampleLimiter_Acquire() {
	client, mr := exampleRedis()
	defer mr.Close()

	limiter, err := slotlimit.New(client, slotlimit.Config{Key: "jobs:export", Limit: 4, TTL: time.Minute})
	if err != nil {
		panic(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := limiter.Acquire(ctx, "worker-7")
	if err != nil {
		fmt.Println("no slot:", err)
		return
	}
	defer limiter.Release(context.Background(), "worker-7")
	fmt.Printf("worker-7 working, %d of %d slots in use\n", res.Count, res.Limit)

	// Output:
	// worker-7 working, 1 of 4 slots in use
}

// Holders lists who holds a slot, and until when.
func ExampleLimiter_Holders() {
	client, mr := exampleRedis()
	defer mr.Close()
	ctx := context.Background()

	limiter, err := slotlimit.New(client, slotlimit.Config{Key: "ar:0571", Limit: 60, TTL: 90 * time.Second})
	if err != nil {
		panic(err)
	}
	limiter.TryAcquire(ctx, "device-1")
	holders, err := limiter.Holders(ctx)
	if err != nil {
		panic(err)
	}
	for _, h := range holders {
		fmt.Println(h.ID, "until", h.ExpiresAt.UTC().Format(time.TimeOnly))
	}

	// Output:
	// device-1 until 12:01:30
}

// A Counter shares its key with services that still run the original
// INCR/DECR scripts, and tells taking the last slot apart from a refusal.
func ExampleCounter() {
	client, mr := exampleRedis()
	defer mr.Close()
	ctx := context.Background()

	counter, err := slotlimit.NewCounter(client, slotlimit.Config{Key: "ar:0571", Limit: 2})
	if err != nil {
		panic(err)
	}
	for i := 1; i <= 3; i++ {
		res, err := counter.TryAcquire(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Printf("try %d: acquired=%v count=%d\n", i, res.Acquired, res.Count)
	}
	counter.Release(ctx)
	n, _ := counter.Count(ctx)
	fmt.Println("after one release:", n)

	// Output:
	// try 1: acquired=true count=1
	// try 2: acquired=true count=2
	// try 3: acquired=false count=2
	// after one release: 1
}

func ExampleConfig_String() {
	fmt.Println(slotlimit.Config{Key: "ar:0571", Limit: 60, TTL: 5 * time.Minute})
	// Output: "ar:0571" 60 slots, 5m0s leases
}

// A worker waits for a slot, keeps it alive while it works, and frees it
// when done. Work that outlives the lease is cancelled if the lease is lost.
func ExampleLimiter_AcquireLease() {
	client, mr := exampleRedis()
	defer mr.Close()
	ctx := context.Background()

	limiter, err := slotlimit.New(client, slotlimit.Config{Key: "jobs:render", Limit: 2, TTL: 30 * time.Second})
	if err != nil {
		panic(err)
	}

	lease, err := limiter.AcquireLease(ctx, 1)
	defer lease.Release(context.WithoutCancel(ctx)) // safe even when lease is nil
	if err != nil {
		fmt.Println("no slot:", err)
		return
	}
	work := lease.KeepAlive(ctx) // renews every 10s; cancelled if the lease is lost
	select {
	case <-work.Done():
		fmt.Println("lease lost:", context.Cause(work))
	default:
		fmt.Printf("working with %d of %d slots in use\n", lease.Result().Count, lease.Result().Limit)
	}

	// Output:
	// working with 1 of 2 slots in use
}

// A large job counts as several holders.
func ExampleLimiter_TryAcquireN() {
	client, mr := exampleRedis()
	defer mr.Close()
	ctx := context.Background()

	limiter, err := slotlimit.New(client, slotlimit.Config{Key: "ar:0571", Limit: 60, TTL: time.Minute})
	if err != nil {
		panic(err)
	}
	res, err := limiter.TryAcquireN(ctx, "bulk-upload-7", 10)
	if err != nil {
		panic(err)
	}
	fmt.Printf("acquired=%v weight=%d in use=%d/%d\n", res.Acquired, res.Weight, res.Count, res.Limit)

	_, err = limiter.TryAcquireN(ctx, "too-big", 61)
	fmt.Println(errors.Is(err, slotlimit.ErrInvalidWeight))

	// Output:
	// acquired=true weight=10 in use=10/60
	// true
}
