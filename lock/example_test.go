package lock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/lock"
)

// exampleStart is the time on the examples' Redis clock.
var exampleStart = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// exampleRedis starts an in-process Redis whose clock stands still at
// exampleStart, so the examples' output does not depend on the time they
// run. Real code passes its own client.
func exampleRedis() (*redis.Client, *miniredis.Miniredis) {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	mr.SetTime(exampleStart)
	return redis.NewClient(&redis.Options{Addr: mr.Addr()}), mr
}

// One process at a time runs the nightly job: TryLock takes the lock or
// says that another owner holds it, and Unlock frees it.
func Example() {
	client, mr := exampleRedis()
	defer mr.Close()
	ctx := context.Background()

	mutex, err := lock.New(client, lock.Config{Key: "jobs:nightly", TTL: 30 * time.Second})
	if err != nil {
		panic(err)
	}
	l, err := mutex.TryLock(ctx)
	if err != nil {
		panic(err) // ErrNotObtained: another process runs the job
	}
	fmt.Println("running the job, fence taken at", time.UnixMicro(l.Fence()).UTC().Format(time.TimeOnly))

	// Another process tries meanwhile, and is told the lock is taken.
	_, err = mutex.TryLock(ctx)
	fmt.Println("another process:", errors.Is(err, lock.ErrNotObtained))

	if err := l.Unlock(ctx); err != nil {
		panic(err) // ErrNotHeld: the lease lapsed before the job was done
	}
	fmt.Println("unlocked")
	fmt.Println("unlock again:", errors.Is(l.Unlock(ctx), lock.ErrNotHeld))

	// Output:
	// running the job, fence taken at 12:00:00
	// another process: true
	// unlocked
	// unlock again: true
}

// Lock waits for the lock, woken by the owner's Unlock rather than by
// polling, for as long as its ctx allows.
func ExampleMutex_Lock() {
	client, mr := exampleRedis()
	defer mr.Close()
	ctx := context.Background()

	mutex, err := lock.New(client, lock.Config{Key: "jobs:nightly", TTL: 30 * time.Second})
	if err != nil {
		panic(err)
	}
	owner, err := mutex.TryLock(ctx)
	if err != nil {
		panic(err)
	}

	// A waiter that will wait 100ms at most gives up, holding nothing.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = mutex.Lock(short)
	fmt.Println("gave up:", errors.Is(err, context.DeadlineExceeded))

	// A waiter with time to wait is handed the lock by the owner's Unlock.
	got := make(chan *lock.Lock)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		l, err := mutex.Lock(ctx)
		if err != nil {
			panic(err)
		}
		got <- l
	}()
	time.Sleep(50 * time.Millisecond) // the job runs
	if err := owner.Unlock(ctx); err != nil {
		panic(err)
	}
	waiter := <-got
	info, err := mutex.Inspect(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("the waiter holds the lock:", info.Token == waiter.Token())
	if err := waiter.Unlock(ctx); err != nil {
		panic(err)
	}

	// Output:
	// gave up: true
	// the waiter holds the lock: true
}

// Refresh extends the lease to TTL from now, as KeepAlive does in the
// background; once the lock is lost, it says so.
func ExampleLock_Refresh() {
	client, mr := exampleRedis()
	defer mr.Close()
	ctx := context.Background()

	mutex, err := lock.New(client, lock.Config{Key: "jobs:nightly", TTL: 30 * time.Second})
	if err != nil {
		panic(err)
	}
	l, err := mutex.TryLock(ctx)
	if err != nil {
		panic(err)
	}
	mr.FastForward(20 * time.Second) // 20s of work, on the server's clock
	info, err := mutex.Inspect(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("lease left:", info.TTL)

	if err := l.Refresh(ctx); err != nil {
		panic(err)
	}
	info, err = mutex.Inspect(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("after Refresh:", info.TTL)

	mr.FastForward(31 * time.Second) // a pause past the lease: the lock lapses
	err = l.Refresh(ctx)
	fmt.Println("lost:", errors.Is(err, lock.ErrNotHeld))

	// Output:
	// lease left: 10s
	// after Refresh: 30s
	// lost: true
}

// A fence grows with every owner, so storage that keeps the highest fence
// it has seen refuses the write of an owner that paused past its lease
// and lost the lock without knowing it.
func ExampleLock_Fence() {
	client, mr := exampleRedis()
	defer mr.Close()
	ctx := context.Background()

	mutex, err := lock.New(client, lock.Config{Key: "jobs:nightly", TTL: 30 * time.Second})
	if err != nil {
		panic(err)
	}
	var highest int64 // what the storage keeps
	write := func(who string, l *lock.Lock) {
		if l.Fence() < highest {
			fmt.Printf("%s: write refused, fence %s is stale\n", who, time.UnixMicro(l.Fence()).UTC().Format(time.TimeOnly))
			return
		}
		highest = l.Fence()
		fmt.Printf("%s: write accepted, fence %s\n", who, time.UnixMicro(l.Fence()).UTC().Format(time.TimeOnly))
	}

	first, err := mutex.TryLock(ctx)
	if err != nil {
		panic(err)
	}
	write("first", first)

	// The first owner pauses for a minute; its lease lapses, and a second
	// owner takes the lock.
	mr.SetTime(exampleStart.Add(time.Minute))
	mr.FastForward(time.Minute)
	second, err := mutex.TryLock(ctx)
	if err != nil {
		panic(err)
	}
	write("second", second)
	write("first", first) // wakes up and writes

	// Output:
	// first: write accepted, fence 12:00:00
	// second: write accepted, fence 12:01:00
	// first: write refused, fence 12:00:00 is stale
}
