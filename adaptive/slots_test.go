package adaptive_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/observe"
)

// The guarantees of the slots, the root limiter's: never more held than
// the limit, leases that lapse, waiters handed slots without polling.

// Under concurrent load from several Limiters (instances) on one key, each
// with its own client, the slots held never exceed the limit: a Limiter
// grants a slot only while fewer than the limit are in use, as each
// Acquired event reports, and the slots held at once, counted by the
// callers, never exceed Max, nor the limit when the load ignores every
// outcome.
func TestNeverMoreThanLimitHeld(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		for _, mode := range []string{"ignore", "feedback"} {
			t.Run(mode, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				rec := &recorder{}
				cfg := adaptive.Config{Min: 1, Max: 6, Initial: 4, Window: 5 * time.Millisecond, Observer: rec}
				first, key := newLimiter(t, b, cfg)
				cfg.Key = key
				limiters := []*adaptive.Limiter{first}
				for range 2 {
					limiters = append(limiters, newLimiterOn(t, b.NewClient(t), cfg))
				}
				var held, most atomic.Int64
				var wg sync.WaitGroup
				const workers, calls = 12, 25
				errs := make(chan error, workers)
				for w := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						l := limiters[w%len(limiters)]
						for i := range calls {
							s, err := l.Acquire(ctx)
							if err != nil {
								errs <- err
								return
							}
							n := held.Add(1)
							for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
							}
							time.Sleep(time.Millisecond)
							held.Add(-1)
							switch {
							case mode == "ignore":
								err = s.Ignore(ctx)
							case (w+i)%3 == 0:
								err = s.Dropped(ctx)
							default:
								err = s.Success(ctx)
							}
							if err != nil {
								errs <- err
								return
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(t, err)
				}
				acquired := rec.of(observe.Acquired)
				require.Len(t, acquired, workers*calls)
				for _, e := range acquired {
					require.LessOrEqual(t, e.InUse, e.Limit, "a slot granted beyond the limit")
				}
				assert.LessOrEqual(t, most.Load(), cfg.Max)
				if mode == "ignore" {
					assert.LessOrEqual(t, most.Load(), cfg.Initial)
					assert.Equal(t, cfg.Initial, limitOf(t, first))
				}
				assert.Zero(t, inUse(t, first), "every slot freed")
			})
		}
	})
}

// A slot that is never freed lapses TTL after its grant, by the server's
// clock, and its slot comes back; freeing it later frees and counts
// nothing.
func TestLeaseLapseReturnsSlot(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 1, TTL: 200 * time.Millisecond, Window: time.Millisecond})
		crashed := take(t, l, 1)[0]
		_, err := l.TryAcquire(ctx)
		require.ErrorIs(t, err, adaptive.ErrLimited)

		b.Advance(250 * time.Millisecond)
		s, err := l.TryAcquire(ctx)
		require.NoError(t, err, "the lapsed slot came back")
		assert.ErrorIs(t, crashed.Dropped(ctx), adaptive.ErrNotHeld)
		assert.Equal(t, int64(1), limitOf(t, l), "a lapsed slot's drop counts nothing")
		assert.Equal(t, int64(1), inUse(t, l), "and frees nothing")
		require.NoError(t, s.Ignore(ctx))
	})
}

// A slot freed is handed to the first waiter at once, which returns on
// the notice, without polling: well before its next try would be due (a
// second), and its Observer hears HandedOver.
func TestHandOffWakesWaiterWithoutPolling(t *testing.T) {
	for _, b := range []*redistest.Backend{redistest.Redis(t), redistest.RedisCluster(t)} {
		t.Run(b.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			rec := &recorder{}
			cfg := adaptive.Config{Min: 1, Max: 5, Initial: 1, Observer: rec}
			holder, key := newLimiter(t, b, cfg)
			cfg.Key = key
			waiter := newLimiterOn(t, b.NewClient(t), cfg)
			s := take(t, holder, 1)[0]

			type result struct {
				slot *adaptive.Slot
				err  error
				at   time.Time
			}
			done := make(chan result, 1)
			go func() {
				slot, err := waiter.Acquire(ctx)
				done <- result{slot, err, time.Now()}
			}()
			eventually(t, 5*time.Second, func() bool {
				info, err := holder.Inspect(ctx)
				return err == nil && info.Waiters == 1
			}, "the waiter never queued")
			time.Sleep(100 * time.Millisecond) // its subscription is confirmed by now
			freed := time.Now()
			require.NoError(t, s.Success(ctx))
			r := <-done
			require.NoError(t, r.err)
			assert.Less(t, r.at.Sub(freed), 500*time.Millisecond, "woken by the notice, not by a try")
			assert.Len(t, rec.of(observe.HandedOver), 1)
			eventually(t, 5*time.Second, func() bool {
				info, err := holder.Inspect(ctx)
				return err == nil && len(info.Holders) == 1 && info.Holders[0].ExpiresAt.Sub(info.ServerTime) > 10*time.Second
			}, "the handed slot was not claimed for its full lease")
			require.NoError(t, r.slot.Success(ctx))
			assert.Zero(t, inUse(t, holder))
		})
	}
}

// When the limit falls below the slots in use, no slot is granted, to a
// try or to a waiter, until the slots in use are below it.
func TestShrunkLimitGrantsNothingUntilBelow(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 10, Initial: 5, Window: time.Minute})
		slots := take(t, l, 5)
		require.NoError(t, slots[0].Dropped(ctx)) // 5 → 4, 4 in use
		require.NoError(t, slots[1].Ignore(ctx))  // 3 in use
		require.NoError(t, slots[2].Dropped(ctx)) // within the window: stays 4
		assert.Equal(t, int64(4), limitOf(t, l))
		more := take(t, l, 2) // 4 of 4
		_, err := l.TryAcquire(ctx)
		require.ErrorIs(t, err, adaptive.ErrLimited)
		for _, s := range append(slots[3:], more...) {
			require.NoError(t, s.Success(ctx))
		}
	})
}

// A second Success, Dropped or Ignore on one Slot frees nothing, counts
// nothing and sends nothing: ErrNotHeld. (A nil Slot: see
// TestSlotNotMadeByLimiterIsInvalid.)
func TestSecondOutcomeFreesOnce(t *testing.T) {
	b := redistest.Redis(t)
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: b.Opts.Addrs[0]})
	t.Cleanup(func() { client.Close() })
	_, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 10, Initial: 2, Window: time.Millisecond})
	counter := &redistest.CommandCounter{}
	client.AddHook(counter)
	l := newLimiterOn(t, client, adaptive.Config{Key: key, Min: 1, Max: 10, Initial: 2, Window: time.Millisecond})
	slots := take(t, l, 2)
	require.NoError(t, slots[0].Success(ctx)) // 2 of 2: up to 3
	assert.Equal(t, int64(3), limitOf(t, l))
	sent := counter.Commands()
	for i, again := range []func(context.Context) error{slots[0].Success, slots[0].Dropped, slots[0].Ignore} {
		assert.ErrorIs(t, again(ctx), adaptive.ErrNotHeld, "call %d", i)
	}
	assert.Equal(t, sent, counter.Commands(), "a second outcome sends nothing")
	assert.Equal(t, int64(3), limitOf(t, l))
	assert.Equal(t, int64(1), inUse(t, l), "one slot freed")

	require.NoError(t, slots[1].Ignore(ctx))
}

// An Acquire whose context ends while it waits returns ctx's error,
// holds nothing and has left the queue; the slot freed next goes to no
// one.
func TestAcquireGivesUpCleanly(t *testing.T) {
	for _, b := range []*redistest.Backend{redistest.Miniredis(t), redistest.Redis(t)} {
		t.Run(b.Name, func(t *testing.T) {
			l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 1})
			s := take(t, l, 1)[0]
			ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
			defer cancel()
			_, err := l.Acquire(ctx)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.False(t, errors.Is(err, adaptive.ErrLimited))
			info, err := l.Inspect(context.Background())
			require.NoError(t, err)
			assert.Zero(t, info.Waiters)
			require.NoError(t, s.Success(context.Background()))
			assert.Zero(t, inUse(t, l), "nothing handed to the waiter that gave up")
		})
	}
}

// The slots a Success adds to the limit go to the waiters at once, with
// the slot it frees, each woken by its notice.
func TestGrownLimitHandsSlotsToWaiters(t *testing.T) {
	b := redistest.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rec := &recorder{}
	cfg := adaptive.Config{Min: 1, Max: 5, Initial: 2, Window: time.Millisecond, Observer: rec}
	l, _ := newLimiter(t, b, cfg)
	slots := take(t, l, 2)
	done := make(chan *adaptive.Slot, 2)
	for range 2 {
		go func() {
			s, err := l.Acquire(ctx)
			assert.NoError(t, err)
			done <- s
		}()
	}
	eventually(t, 5*time.Second, func() bool {
		info, err := l.Inspect(ctx)
		return err == nil && info.Waiters == 2
	}, "the waiters never queued")
	time.Sleep(100 * time.Millisecond) // their subscription is confirmed by now
	freed := time.Now()
	require.NoError(t, slots[0].Success(ctx)) // 2 of 2 and waiters: up to 3, 1 in use
	var handed []*adaptive.Slot
	for range 2 {
		handed = append(handed, <-done)
	}
	assert.Less(t, time.Since(freed), 500*time.Millisecond, "woken by their notices, not by their tries")
	assert.Len(t, rec.of(observe.HandedOver), 2)
	assert.Equal(t, int64(3), inUse(t, l), "3 of 3")
	for _, s := range append(handed, slots[1]) {
		require.NoError(t, s.Ignore(ctx))
	}
}

// The limit is kept for StateTTL after the last release on its key.
func TestStateLapsesAfterStateTTL(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	l, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 2})
	require.NoError(t, take(t, l, 1)[0].Success(ctx))
	keys, _ := adaptive.Keys(key)
	assert.Equal(t, adaptive.StateTTL, b.Client.PTTL(ctx, keys[0]).Val())
	b.Advance(adaptive.StateTTL)
	info, err := l.Inspect(ctx)
	require.NoError(t, err)
	assert.False(t, info.Stored, "a day unused: the limit is forgotten")
}
