package adaptive_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// benchLimiter returns a Limiter on a real Redis, for a key of the
// benchmark's own.
func benchLimiter(b *testing.B) *adaptive.Limiter {
	client := redis.NewClient(&redis.Options{Addr: redistest.Addr(b)})
	b.Cleanup(func() { client.Close() })
	l, err := adaptive.New(client, adaptive.Config{Key: fmt.Sprintf("adaptive-bench:%s:%d", b.Name(), time.Now().UnixNano()),
		Max: 100, Initial: 50, TTL: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// A TryAcquire and a Success: the commonest pair.
func BenchmarkTryAcquireSuccess(b *testing.B) {
	l := benchLimiter(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s, err := l.TryAcquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Success(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// An Acquire of a free slot, which takes it at its first try, and a
// Dropped.
func BenchmarkAcquireDropped(b *testing.B) {
	l := benchLimiter(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s, err := l.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Dropped(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// An Inspect of a limit with one slot held.
func BenchmarkInspect(b *testing.B) {
	l := benchLimiter(b)
	ctx := context.Background()
	s, err := l.TryAcquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Inspect(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	s.Ignore(ctx) //nolint:errcheck
}
