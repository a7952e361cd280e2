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

// A release that hands its slot to a waiter, whose reply is lost and
// which go-redis sends again, hands one slot, once: the waiter holds it
// and nothing else is held.
func TestAdversaryHandOffResent(t *testing.T) {
	redistest.EachCutBackend(t, adaptive.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		plain, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 1, Window: time.Minute})
		l := newLimiterOn(t, client, plain.Config())
		s := take(t, l, 1)[0]
		done := make(chan *adaptive.Slot, 2)
		for range 2 {
			go func() {
				w, err := plain.Acquire(ctx)
				if err == nil {
					done <- w
				}
			}()
		}
		eventually(t, 5*time.Second, func() bool {
			info, err := plain.Inspect(ctx)
			return err == nil && info.Waiters == 2
		}, "the waiters never queued")
		keys, _ := adaptive.Keys(key)
		cutter.Arm(1, "evalsha", keys[1])
		require.NoError(t, s.Ignore(ctx), "sent again, it finds its slot freed")
		cutter.RequireOneMore(t, 0)
		w := <-done
		select {
		case <-done:
			t.Fatal("a release sent again handed a second slot")
		case <-time.After(300 * time.Millisecond):
		}
		info, err := plain.Inspect(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), info.InUse)
		assert.Equal(t, int64(1), info.Waiters)
		assert.Equal(t, w.ID(), info.Holders[0].ID)
		require.NoError(t, w.Ignore(ctx))
		last := <-done
		require.NoError(t, last.Ignore(ctx))
		assert.Zero(t, inUse(t, plain))
	})
}

// A waiter's try whose reply is lost, sent again, keeps its one place in
// the queue, and a try that takes a slot holds one: the waiter is handed
// a slot by the next release, and then nothing else is held or queued.
func TestAdversaryWaiterTryResent(t *testing.T) {
	redistest.EachCutBackend(t, adaptive.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		plain, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 1, Window: time.Minute})
		l := newLimiterOn(t, client, plain.Config())

		cutter.Arm(1, "evalsha", adaptive.AcquireSHA())
		s, err := l.Acquire(ctx) // a free slot, taken by the first run
		require.NoError(t, err)
		cutter.RequireOneMore(t, 0)
		assert.Equal(t, int64(1), inUse(t, plain))

		done := make(chan *adaptive.Slot, 1)
		cutter.Arm(1, "evalsha", adaptive.AcquireSHA())
		go func() {
			w, err := l.Acquire(ctx)
			assert.NoError(t, err)
			done <- w
		}()
		eventually(t, 5*time.Second, func() bool {
			info, err := plain.Inspect(ctx)
			return err == nil && info.Waiters == 1 && !cutter.Armed()
		}, "the waiter never queued")
		time.Sleep(100 * time.Millisecond)
		require.NoError(t, s.Ignore(ctx))
		w := <-done
		info, err := plain.Inspect(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), info.InUse)
		assert.Zero(t, info.Waiters)
		require.NoError(t, w.Ignore(ctx))
		assert.Zero(t, inUse(t, plain))
	})
}

// The claim of a handed slot, whose reply is lost and which go-redis
// sends again, holds the slot for its full lease, once: freeing it then
// frees one slot.
func TestAdversaryClaimResent(t *testing.T) {
	redistest.EachCutBackend(t, adaptive.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		plain, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 1, TTL: time.Minute, Window: time.Minute})
		l := newLimiterOn(t, client, plain.Config())
		s := take(t, plain, 1)[0]
		done := make(chan *adaptive.Slot, 1)
		go func() {
			w, err := l.Acquire(ctx)
			assert.NoError(t, err)
			done <- w
		}()
		eventually(t, 5*time.Second, func() bool {
			info, err := plain.Inspect(ctx)
			return err == nil && info.Waiters == 1
		}, "the waiter never queued")
		time.Sleep(100 * time.Millisecond)
		cutter.Arm(1, "evalsha", adaptive.ClaimSHA())
		require.NoError(t, s.Ignore(ctx))
		w := <-done
		eventually(t, 5*time.Second, func() bool { return !cutter.Armed() }, "the claim was never sent")
		eventually(t, 5*time.Second, func() bool {
			info, err := plain.Inspect(ctx)
			return err == nil && len(info.Holders) == 1 && info.Holders[0].ExpiresAt.Sub(info.ServerTime) > 30*time.Second
		}, "the claim sent again did not hold the slot for its lease")
		require.NoError(t, w.Success(ctx))
		assert.ErrorIs(t, w.Success(ctx), adaptive.ErrNotHeld)
		assert.Zero(t, inUse(t, plain))
	})
}
