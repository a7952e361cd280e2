package slotlimit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// gauge counts holders inside the guarded section and keeps the peak.
type gauge struct{ inside, peak atomic.Int64 }

func (g *gauge) enter() {
	n := g.inside.Add(1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
}

func (g *gauge) leave() { g.inside.Add(-1) }

// 300 goroutines over 3 clients hammer one key with limit 60 on a real
// Redis. The number of holders inside at once never passes 60, and every
// slot is back at the end. A busy machine runs fewer of the goroutines at
// once: they go on past runFor, up to a minute, until the section has
// been crowded enough to test the limit.
func TestLimiterNeverOverAdmits(t *testing.T) {
	const (
		limit     = 60
		clients   = 3
		workers   = 300
		maxRounds = 2000 // per worker, a bound besides the time
		runFor    = 3 * time.Second
		holdFor   = 10 * time.Millisecond // plus up to as much again
	)
	addr := redistest.Addr(t)
	ctx := context.Background()
	key := fmt.Sprintf("slotlimit-test:invariant:%d", rand.Int64())

	limiters := make([]*slotlimit.Limiter, clients)
	for i := range limiters {
		client := redis.NewClient(&redis.Options{Addr: addr, PoolSize: workers / clients})
		t.Cleanup(func() { client.Close() })
		l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: limit, TTL: time.Minute})
		require.NoError(t, err)
		limiters[i] = l
	}

	var (
		g                 gauge
		acquired, refused atomic.Int64
		wg                sync.WaitGroup
		stop              = time.Now().Add(runFor)
		giveUp            = time.Now().Add(time.Minute)
	)
	running := func() bool {
		now := time.Now()
		return now.Before(stop) || g.peak.Load() <= limit/2 && now.Before(giveUp)
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(l *slotlimit.Limiter, holder string, waits bool) {
			defer wg.Done()
			for r := 0; r < maxRounds && running(); r++ {
				var res slotlimit.Result
				var err error
				if waits {
					wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
					res, err = l.Acquire(wctx, holder)
					cancel()
					if err != nil && wctx.Err() != nil {
						refused.Add(1)
						continue
					}
				} else {
					res, err = l.TryAcquire(ctx, holder)
				}
				if !assert.NoError(t, err) {
					return
				}
				if !res.Acquired {
					refused.Add(1)
					continue
				}
				acquired.Add(1)
				assert.LessOrEqual(t, res.Count, int64(limit))
				g.enter()
				time.Sleep(holdFor + rand.N(holdFor))
				g.leave()
				err = l.Release(ctx, holder)
				assert.NoError(t, err)
			}
		}(limiters[w%clients], fmt.Sprintf("worker-%d", w), w%3 == 0)
	}
	wg.Wait()

	t.Logf("acquired %d, refused %d, peak inside %d", acquired.Load(), refused.Load(), g.peak.Load())
	assert.LessOrEqual(t, g.peak.Load(), int64(limit), "never more than the limit inside")
	assert.Positive(t, refused.Load(), "the limit was reached")
	assert.Greater(t, g.peak.Load(), int64(limit/2), "the section was crowded enough to test the limit")
	assert.Positive(t, acquired.Load())
	n, err := limiters[0].Count(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "every slot is back")
}
