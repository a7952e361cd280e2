package slotlimit

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/redistest"

	"github.com/slotlimit/slotlimit/observe"
)

// benchServers runs bench against miniredis and a real Redis.
func benchServers(b *testing.B, bench func(b *testing.B, client *redis.Client)) {
	b.Run("miniredis", func(b *testing.B) {
		mr := miniredis.RunT(b)
		client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		defer client.Close()
		bench(b, client)
	})
	b.Run("redis", func(b *testing.B) {
		client := redis.NewClient(&redis.Options{Addr: redistest.Addr(b), PoolSize: 64})
		defer client.Close()
		bench(b, client)
	})
}

var benchKeys atomic.Int64

func benchLimiter(b *testing.B, client *redis.Client) *Limiter {
	l, err := New(client, Config{Key: fmt.Sprintf("slotlimit-bench:%d", benchKeys.Add(1)), Limit: 1 << 30, TTL: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkTryAcquireRelease measures a TryAcquire and Release pair through
// the library (library) against the same two scripts run by go-redis's
// EvalSha with the same keys and arguments and nothing around them (bare),
// in parallel, with allocations. The library's overhead is the ratio.
//
//	go test -run '^$' -bench BenchmarkTryAcquireRelease -benchmem
func BenchmarkTryAcquireRelease(b *testing.B) {
	benchServers(b, func(b *testing.B, client *redis.Client) {
		ctx := context.Background()
		b.Run("library", func(b *testing.B) {
			l := benchLimiter(b, client)
			var workers atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				holder := fmt.Sprintf("h%d", workers.Add(1))
				for pb.Next() {
					if _, err := l.TryAcquire(ctx, holder); err != nil {
						b.Error(err)
						return
					}
					if err := l.Release(ctx, holder); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run("bare", func(b *testing.B) {
			l := benchLimiter(b, client)
			checkBareCalls(b, l)
			acquireScript.Load(ctx, client)
			releaseScript.Load(ctx, client)
			var workers atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				holder := fmt.Sprintf("h%d", workers.Add(1))
				for pb.Next() {
					if err := acquireScript.EvalSha(ctx, client, l.keys[:3], l.limit, l.ttl, "1", holder).Err(); err != nil {
						b.Error(err)
						return
					}
					if err := releaseScript.EvalSha(ctx, client, l.keys, l.releaseFixed, "0", holder).Err(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	})
}

// BenchmarkTryAcquireAllocs compares one TryAcquire's allocations with one
// bare EvalSha of the acquire script, serially.
func BenchmarkTryAcquireAllocs(b *testing.B) {
	benchServers(b, func(b *testing.B, client *redis.Client) {
		ctx := context.Background()
		l := benchLimiter(b, client)
		checkBareCalls(b, l)
		acquireScript.Load(ctx, client)
		b.Run("library", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l.TryAcquire(ctx, "h")
			}
		})
		b.Run("bare", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				acquireScript.EvalSha(ctx, client, l.keys[:3], l.limit, l.ttl, "1", "h")
			}
		})
	})
}

// checkBareCalls stops a benchmark whose bare calls no longer pass what the
// library passes.
func checkBareCalls(b *testing.B, l *Limiter) {
	call := l.acquireCall(1, false, "h")
	if call.script != acquireScript || !slices.Equal(call.keys, l.keys[:3]) || !slices.Equal(call.args, []any{l.limit, l.ttl, "1", "h"}) {
		b.Fatalf("acquire calls changed: %q %q", call.keys, call.args)
	}
	if release := l.releaseArgs("h"); !slices.Equal(release, []any{l.releaseFixed, "0", "h"}) {
		b.Fatalf("release calls changed: %q", release)
	}
}

// noopObserver is an Observer that does nothing, to price the reporting
// itself.
type noopObserver struct{}

func (noopObserver) Observe(context.Context, observe.Event) {}

// BenchmarkTryAcquireObserver compares one TryAcquire with no Observer,
// the default, against one with an Observer that does nothing, serially,
// with allocations. Against the code before observers, compare
// BenchmarkTryAcquireAllocs/library across the two commits (see
// docs/design.md).
//
//	go test -run '^$' -bench BenchmarkTryAcquireObserver -benchmem
func BenchmarkTryAcquireObserver(b *testing.B) {
	benchServers(b, func(b *testing.B, client *redis.Client) {
		ctx := context.Background()
		for _, obs := range []struct {
			name string
			obs  observe.Observer
		}{{"nil", nil}, {"noop", noopObserver{}}} {
			b.Run(obs.name, func(b *testing.B) {
				l, err := New(client, Config{Key: fmt.Sprintf("slotlimit-bench:%d", benchKeys.Add(1)),
					Limit: 1 << 30, TTL: time.Minute, Observer: obs.obs})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					l.TryAcquire(ctx, "h")
				}
			})
		}
	})
}
