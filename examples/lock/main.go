// Command lock runs a job that several processes contend for, under a
// slotlimit lock, and checks itself.
//
// Three runners (as three processes would) want to run the nightly job;
// the lock lets one at a time in. Each job takes longer than the lock's
// TTL, and stays the owner under KeepAlive. Every write the job makes to
// storage carries the lock's fence, and the storage refuses a fence lower
// than one it has seen. Then a runner pauses without KeepAlive past its
// TTL, as a process stopped by a long GC pause or a frozen VM would; its
// lock lapses and the next runner takes it, and when the paused runner
// wakes and writes, the storage refuses its stale fence.
//
// It ends with a verdict, PASS or FAIL, and exits 1 on FAIL.
//
// By default it runs on an embedded miniredis; -redis host:port runs it
// against a real server (loopback only).
//
//	go run ./examples/lock
//	go run ./examples/lock -redis 127.0.0.1:6379
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/exampleredis"
	"github.com/slotlimit/slotlimit/lock"
)

func main() {
	log.SetFlags(0)
	addr := flag.String("redis", "", "Redis `host:port` (loopback); empty runs an embedded miniredis")
	ttl := flag.Duration("ttl", 300*time.Millisecond, "the lock's TTL")
	flag.Parse()
	if err := run(*addr, *ttl); err != nil {
		log.Printf("FAIL: %v", err)
		os.Exit(1)
	}
}

// storage keeps the highest fence it has accepted and refuses a write
// that carries a lower one: the owner that wrote it has lost the lock.
type storage struct {
	mu      sync.Mutex
	fence   int64
	written []string
}

var errStaleFence = errors.New("stale fence")

func (s *storage) write(fence int64, what string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fence < s.fence {
		return fmt.Errorf("%w: %d after %d", errStaleFence, fence, s.fence)
	}
	s.fence = fence
	s.written = append(s.written, what)
	return nil
}

func run(addr string, ttl time.Duration) error {
	addr, stop, err := exampleredis.Open(addr)
	if err != nil {
		return err
	}
	defer stop()
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := fmt.Sprintf("example:lock:nightly:%d", time.Now().UnixNano())
	defer client.Del(context.Background(), key)

	store := &storage{}
	var inside, most int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for runner := 1; runner <= 3; runner++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := lock.New(client, lock.Config{Key: key, TTL: ttl})
			if err != nil {
				log.Fatal(err)
			}
			l, err := m.Lock(ctx) // waits, woken by the previous owner's Unlock
			if err != nil {
				log.Printf("runner %d: %v", runner, err)
				return
			}
			defer l.Unlock(context.WithoutCancel(ctx))
			work := l.KeepAlive(ctx)
			mu.Lock()
			inside++
			most = max(most, inside)
			mu.Unlock()
			fmt.Printf("runner %d: has the lock, fence %d; the job takes %v, %v TTL\n", runner, l.Fence(), 5*ttl/2, ttl)
			select {
			case <-time.After(5 * ttl / 2): // longer than the TTL
			case <-work.Done():
				log.Printf("runner %d: lost the lock: %v", runner, context.Cause(work))
			}
			if err := store.write(l.Fence(), fmt.Sprintf("runner %d", runner)); err != nil {
				log.Printf("runner %d: write refused: %v", runner, err)
			}
			mu.Lock()
			inside--
			mu.Unlock()
		}()
	}
	wg.Wait()
	if most != 1 || len(store.written) != 3 {
		return fmt.Errorf("%d runners inside at once, %d of 3 jobs written", most, len(store.written))
	}

	// A runner pauses past its TTL without KeepAlive, and writes after.
	m, err := lock.New(client, lock.Config{Key: key, TTL: ttl})
	if err != nil {
		return err
	}
	paused, err := m.TryLock(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("runner 4: has the lock, fence %d, and pauses for %v\n", paused.Fence(), 2*ttl)
	time.Sleep(2 * ttl) // its lock lapses meanwhile
	next, err := m.Lock(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("runner 5: has the lock, fence %d\n", next.Fence())
	if err := store.write(next.Fence(), "runner 5"); err != nil {
		return err
	}
	err = store.write(paused.Fence(), "runner 4, after its pause")
	fmt.Printf("runner 4: wakes and writes: %v\n", err)
	if !errors.Is(err, errStaleFence) {
		return errors.New("the paused runner's stale write was accepted")
	}
	if err := paused.Unlock(ctx); !errors.Is(err, lock.ErrNotHeld) {
		return fmt.Errorf("the paused runner's unlock: %v, want ErrNotHeld", err)
	}
	if err := next.Unlock(ctx); err != nil {
		return err
	}
	fmt.Println("PASS: one runner inside at a time, jobs outlived their TTL under KeepAlive, the stale fence was refused")
	return nil
}
