package ratelimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// SCRIPT FLUSH every few milliseconds while callers run Allow and
// AllowAll: no call fails (NOSCRIPT is answered with EVAL), and the
// limit holds.
func TestScriptFlushUnderLoad(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		tag := "{" + b.Key(t, "rl-test:") + "}"
		gcraKey, windowKey := tag+":gcra", tag+":window"
		t.Cleanup(func() { b.Client.Del(ctx, gcraKey, windowKey) })
		const rate = 50
		window := ratelimit.Limit{Rate: rate, Period: time.Hour, Algorithm: ratelimit.FixedWindow}
		gcra := ratelimit.PerMinute(1000)

		flush := func() error {
			if cluster, ok := b.Client.(*redis.ClusterClient); ok {
				return cluster.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
					return m.ScriptFlush(ctx).Err()
				})
			}
			return b.Client.ScriptFlush(ctx).Err()
		}
		stop := make(chan struct{})
		var flushes atomic.Int64
		var flusher sync.WaitGroup
		flusher.Add(1)
		go func() {
			defer flusher.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
				if flush() == nil {
					flushes.Add(1)
				}
			}
		}()

		var calls, allowed atomic.Int64
		var failed atomic.Value
		deadline := time.Now().Add(time.Second)
		var wg sync.WaitGroup
		for g := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 500 && time.Now().Before(deadline); i++ {
					calls.Add(1)
					var err error
					if g%2 == 0 {
						var rs ratelimit.Results
						rs, err = limiter.AllowAll(ctx, []ratelimit.Rule{{Key: windowKey, Limit: window}, {Key: gcraKey, Limit: gcra}})
						if err == nil && rs.Allowed() {
							allowed.Add(1)
						}
					} else {
						var res ratelimit.Result
						res, err = limiter.Allow(ctx, windowKey, window)
						if err == nil && res.Allowed {
							allowed.Add(1)
						}
					}
					if err != nil {
						failed.Store(err)
					}
				}
			}()
		}
		wg.Wait()
		close(stop)
		flusher.Wait()
		assert.Nil(t, failed.Load(), "a call failed")
		assert.Greater(t, flushes.Load(), int64(2), "the cache was flushed under load")
		assert.Greater(t, calls.Load(), int64(rate))
		assert.Equal(t, int64(rate), allowed.Load(), "exactly the window's rate")
	})
}
