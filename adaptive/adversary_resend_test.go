package adaptive_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A TryAcquire whose reply is lost, and which go-redis sends again after
// a decrease ran in between, holds a slot granted before that decrease:
// its drop, reported after the window, counts nothing, as a drop of any
// call admitted under the old limit.
func TestAdversaryTryAcquireResentAcrossDecrease(t *testing.T) {
	for _, b := range []*redistest.Backend{redistest.Redis(t), redistest.RedisCluster(t)} {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			window := 100 * time.Millisecond
			plain, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 100, Initial: 10, Window: window})
			early := take(t, plain, 1)[0]
			// Between the lost reply and the call sent again (on a new
			// connection), another instance reports a drop that counts.
			client, cutter := b.CutClient(t, func(o *redis.UniversalOptions) { o.PoolSize = 1 })
			var dropped atomic.Bool
			hook := dialHook(func() {
				if cutter.Cuts() == 1 && dropped.CompareAndSwap(false, true) {
					time.Sleep(5 * time.Millisecond) // a new ms on the server's clock
					assert.NoError(t, early.Dropped(ctx))
				}
			})
			if cluster, ok := client.(*redis.ClusterClient); ok {
				cluster.OnNewNode(func(node *redis.Client) { node.AddHook(hook) })
			} else {
				client.AddHook(hook)
			}
			require.NoError(t, adaptive.LoadScripts(ctx, client))
			l := newLimiterOn(t, client, plain.Config())

			cutter.Arm(1, "evalsha", adaptive.AcquireSHA())
			s, err := l.TryAcquire(ctx)
			cutter.RequireOneMore(t, 0)
			require.NoError(t, err)
			require.True(t, dropped.Load(), "the drop ran between the two sends")
			assert.Equal(t, int64(9), limitOf(t, plain), "10 × 0.9")
			assert.Equal(t, int64(1), inUse(t, plain))

			b.Advance(window + 20*time.Millisecond)
			require.NoError(t, s.Dropped(ctx))
			assert.Equal(t, int64(9), limitOf(t, plain), "a slot granted before the decrease: its drop counts nothing")
			assert.Zero(t, inUse(t, plain))
		})
	}
}

// dialHook runs before each dial of a client's connections.
type dialHook func()

func (h dialHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h()
		return next(ctx, network, addr)
	}
}
func (dialHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (dialHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
