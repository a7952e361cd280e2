package lock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// benchMutex returns a Mutex on a real Redis, for a key of the benchmark's
// own.
func benchMutex(b *testing.B) *lock.Mutex {
	client := redis.NewClient(&redis.Options{Addr: redistest.Addr(b)})
	b.Cleanup(func() { client.Close() })
	m, err := lock.New(client, lock.Config{Key: fmt.Sprintf("lock-bench:%s:%d", b.Name(), time.Now().UnixNano()), TTL: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// A TryLock and an Unlock of a free lock: the commonest pair.
func BenchmarkTryLockUnlock(b *testing.B) {
	m := benchMutex(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		l, err := m.TryLock(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Unlock(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// A Lock of a free lock, which takes it at its first try, and an Unlock.
func BenchmarkLockUnlock(b *testing.B) {
	m := benchMutex(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		l, err := m.Lock(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Unlock(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// A Refresh of a held lock.
func BenchmarkRefresh(b *testing.B) {
	m := benchMutex(b)
	ctx := context.Background()
	l, err := m.TryLock(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Refresh(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	l.Unlock(ctx) //nolint:errcheck
}

// An Inspect of a held lock.
func BenchmarkInspect(b *testing.B) {
	m := benchMutex(b)
	ctx := context.Background()
	l, err := m.TryLock(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Inspect(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	l.Unlock(ctx) //nolint:errcheck
}
