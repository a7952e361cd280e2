package adaptive_test

import (
	"context"
	"errors"
	"math"
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

// Attacks on the promises of the package doc, each on a real Redis: a
// test here fails if the promise it names breaks.

// At every moment, read by one Inspect, no slot is held beyond the limit
// it was granted under. A slot granted after the last decrease was
// granted under a limit no higher than the current one (the limit only
// grew since), and every slot granted before it and still live was held
// at its grant; so, with leases of one length (TryAcquire alone: a grant
// is its deadline less TTL), the live slots granted up to such a slot
// never outnumber the current limit. Three instances drive the limit up
// and down with Success and Dropped (a Factor of 0.5, so that a decrease
// leaves slots in use above the limit), a window of 5 ms, while a checker
// reads the state again and again.
func TestAdversaryNoSlotBeyondItsLimitUnderFeedback(t *testing.T) {
	for _, b := range []*redistest.Backend{redistest.Redis(t), redistest.RedisCluster(t)} {
		t.Run(b.Name, func(t *testing.T) {
			const ttl = 20 * time.Second
			cfg := adaptive.Config{Min: 2, Max: 12, Initial: 8, TTL: ttl, Window: 5 * time.Millisecond, Factor: 0.5}
			first, key := newLimiter(t, b, cfg)
			cfg.Key = key
			limiters := []*adaptive.Limiter{first, newLimiterOn(t, b.NewClient(t), cfg), newLimiterOn(t, b.NewClient(t), cfg)}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			stop := time.Now().Add(1500 * time.Millisecond)
			var wg sync.WaitGroup
			var granted, overs atomic.Int64
			errs := make(chan error, 16)
			for w := range 9 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					l := limiters[w%len(limiters)]
					for i := 0; time.Now().Before(stop); i++ {
						s, err := l.TryAcquire(ctx)
						if errors.Is(err, adaptive.ErrLimited) {
							time.Sleep(time.Millisecond)
							continue
						}
						if err != nil {
							errs <- err
							return
						}
						granted.Add(1)
						time.Sleep(time.Duration(1+i%3) * time.Millisecond)
						if (w+i)%4 == 0 {
							err = s.Dropped(ctx)
						} else {
							err = s.Success(ctx)
						}
						if err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			checks := 0
			var lastDown, lastUp time.Time
			for time.Now().Before(stop) {
				info, err := first.Inspect(ctx)
				require.NoError(t, err)
				checks++
				// The limit moves at most once per window, and does not grow
				// within 5 windows of a decrease.
				if d := info.LastDecrease; !lastDown.IsZero() && d.After(lastDown) {
					require.GreaterOrEqual(t, d.Sub(lastDown), cfg.Window, "two decreases within a window")
				}
				if u := info.LastIncrease; !lastUp.IsZero() && u.After(lastUp) {
					require.GreaterOrEqual(t, u.Sub(lastUp), cfg.Window, "two increases within a window")
				}
				if u, d := info.LastIncrease, info.LastDecrease; !d.IsZero() && u.After(d) {
					require.GreaterOrEqual(t, u.Sub(d), 5*cfg.Window, "an increase within 5 windows of a decrease")
				}
				lastDown, lastUp = info.LastDecrease, info.LastIncrease
				if info.InUse > info.Limit {
					overs.Add(1)
				}
				h := info.Holders
				for i := 0; i < len(h); i++ {
					grant := h[i].ExpiresAt.Add(-ttl)
					if !grant.After(info.LastDecrease) {
						continue
					}
					j := i
					for j+1 < len(h) && h[j+1].ExpiresAt.Equal(h[i].ExpiresAt) {
						j++
					}
					require.LessOrEqual(t, int64(j+1), info.Limit,
						"%d slots live that were granted by %v, after the last decrease (%v), under a limit of %d now",
						j+1, grant, info.LastDecrease, info.Limit)
				}
				require.LessOrEqual(t, info.Limit, cfg.Max)
				require.GreaterOrEqual(t, info.Limit, cfg.Min)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			assert.Positive(t, granted.Load())
			assert.Greater(t, checks, 10, "the checker ran")
			assert.Zero(t, inUse(t, first), "every slot freed")
			assert.False(t, lastDown.IsZero(), "the limit went down")
			t.Logf("%d grants, %d checks, %d with the limit below the slots in use", granted.Load(), checks, overs.Load())
		})
	}
}

// A decrease that comes while slots are held and callers wait hands
// nothing on until the slots in use are below the new limit: the drop
// frees one slot of two, the limit goes from 2 to 1, and neither waiter
// gets it; the next release hands one slot, to the first waiter alone.
func TestAdversaryHandOffAfterDecrease(t *testing.T) {
	for _, b := range []*redistest.Backend{redistest.Redis(t), redistest.RedisCluster(t)} {
		t.Run(b.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 2, Window: time.Minute})
			held := take(t, l, 2)
			got := make(chan *adaptive.Slot, 2)
			for range 2 {
				go func() {
					s, err := l.Acquire(ctx)
					if err == nil {
						got <- s
					}
				}()
			}
			eventually(t, 5*time.Second, func() bool {
				info, err := l.Inspect(ctx)
				return err == nil && info.Waiters == 2
			}, "the waiters never queued")
			require.NoError(t, held[0].Dropped(ctx)) // 2 → 1, 1 in use
			assert.Equal(t, int64(1), limitOf(t, l))
			select {
			case <-got:
				t.Fatal("a slot was handed while the slots in use were at the new limit")
			case <-time.After(300 * time.Millisecond):
			}
			assert.Equal(t, int64(1), inUse(t, l))

			require.NoError(t, held[1].Success(ctx)) // 0 in use: one slot to hand, within the hold after the decrease
			var first *adaptive.Slot
			select {
			case first = <-got:
			case <-time.After(5 * time.Second):
				t.Fatal("no waiter was handed the slot")
			}
			select {
			case <-got:
				t.Fatal("two waiters were handed slots under a limit of one")
			case <-time.After(300 * time.Millisecond):
			}
			assert.Equal(t, int64(1), inUse(t, l))
			require.NoError(t, first.Ignore(ctx))
			second := <-got
			assert.Equal(t, int64(1), inUse(t, l))
			require.NoError(t, second.Ignore(ctx))
			assert.Zero(t, inUse(t, l))
		})
	}
}

// A waiter stopped after it queued (a process paused, its notices never
// read) is handed a slot that it holds for the claim time at most, by
// the server's clock: after it, the slot is free again.
func TestAdversaryStoppedWaiterHoldsSlotForClaimTimeAtMost(t *testing.T) {
	for _, b := range []*redistest.Backend{redistest.Miniredis(t), redistest.Redis(t)} {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 1, TTL: time.Minute})
			s := take(t, l, 1)[0]
			held, arrival, err := adaptive.Queue(ctx, l, "stopped-waiter")
			require.NoError(t, err)
			require.False(t, held)
			require.Positive(t, arrival)

			require.NoError(t, s.Ignore(ctx)) // handed to the stopped waiter
			info, err := l.Inspect(ctx)
			require.NoError(t, err)
			require.Len(t, info.Holders, 1)
			assert.Equal(t, "stopped-waiter", info.Holders[0].ID)
			left := info.Holders[0].ExpiresAt.Sub(info.ServerTime)
			assert.LessOrEqual(t, left, 3*time.Second, "held for the claim time, not the lease of a minute")
			_, err = l.TryAcquire(ctx)
			require.ErrorIs(t, err, adaptive.ErrLimited, "held for the waiter meanwhile")

			b.Advance(left + 20*time.Millisecond)
			again, err := l.TryAcquire(ctx)
			require.NoError(t, err, "the claim time ran out: the slot is free")
			require.NoError(t, again.Ignore(ctx))
			assert.Zero(t, inUse(t, l))
		})
	}
}

// A waiter that gives up leaves the queue and hands on what it was handed
// meanwhile, to the next waiter, and then nothing is left held.
func TestAdversaryGivingUpHandsOnWhatWasHanded(t *testing.T) {
	for _, b := range []*redistest.Backend{redistest.Redis(t), redistest.RedisCluster(t)} {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 1})
			s := take(t, l, 1)[0]
			for _, w := range []string{"w1", "w2"} {
				held, _, err := adaptive.Queue(ctx, l, w)
				require.NoError(t, err)
				require.False(t, held)
			}
			require.NoError(t, s.Ignore(ctx)) // handed to w1
			holders := func() []string {
				info, err := l.Inspect(ctx)
				require.NoError(t, err)
				var ids []string
				for _, h := range info.Holders {
					ids = append(ids, h.ID)
				}
				return ids
			}
			assert.Equal(t, []string{"w1"}, holders())
			require.NoError(t, adaptive.Leave(ctx, l, "w1"))
			assert.Equal(t, []string{"w2"}, holders(), "w1 handed its slot on as it gave up")
			require.NoError(t, adaptive.Leave(ctx, l, "w2"))
			assert.Empty(t, holders(), "nothing leaked")
			info, err := l.Inspect(ctx)
			require.NoError(t, err)
			assert.Zero(t, info.Waiters)
			assert.Equal(t, int64(1), info.Limit, "leaving counts nothing")
		})
	}
}

// Callers of Acquire whose contexts end at every moment around the
// release that hands them a slot leave nothing held and no one queued.
func TestAdversaryAcquireCancelledAroundHandOff(t *testing.T) {
	b := redistest.Redis(t)
	l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 1, Window: time.Minute})
	bg := context.Background()
	for i := range 12 {
		s := take(t, l, 1)[0]
		ctx, cancel := context.WithCancel(bg)
		done := make(chan *adaptive.Slot, 1)
		go func() {
			slot, err := l.Acquire(ctx)
			if err != nil {
				slot = nil
			}
			done <- slot
		}()
		time.Sleep(time.Duration(20+i*3) * time.Millisecond)
		go func() {
			time.Sleep(time.Duration(i%4) * time.Millisecond)
			cancel()
		}()
		require.NoError(t, s.Success(bg))
		if slot := <-done; slot != nil {
			require.NoError(t, slot.Ignore(bg), "round %d", i)
		}
		cancel()
		info, err := l.Inspect(bg)
		require.NoError(t, err)
		assert.Zero(t, info.InUse, "round %d: a slot leaked", i)
		assert.Zero(t, info.Waiters, "round %d: a waiter left behind", i)
	}
}

// Success, Dropped and Ignore called at once on one Slot, many times
// each, with replies lost and sent again, free one slot and count one
// outcome: one call returns nil, the rest ErrNotHeld, and the limit moves
// once.
func TestAdversaryManyOutcomesOneSlot(t *testing.T) {
	redistest.EachCutBackend(t, adaptive.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		plain, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 100, Initial: 10, Window: time.Minute})
		l := newLimiterOn(t, client, plain.Config())
		slots := take(t, l, 3)
		keys, _ := adaptive.Keys(key)
		cutter.Arm(2, "evalsha", keys[1])
		var ok, notHeld atomic.Int64
		var wg sync.WaitGroup
		for range 4 {
			for _, f := range []func(context.Context) error{slots[0].Dropped, slots[0].Success, slots[0].Ignore} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					switch err := f(ctx); {
					case err == nil:
						ok.Add(1)
					case errors.Is(err, adaptive.ErrNotHeld):
						notHeld.Add(1)
					default:
						t.Errorf("unexpected error: %v", err)
					}
				}()
			}
		}
		wg.Wait()
		assert.Equal(t, int64(1), ok.Load(), "one call freed the slot")
		assert.Equal(t, int64(11), notHeld.Load())
		assert.Equal(t, int64(2), inUse(t, plain), "one slot freed")
		limit := limitOf(t, plain)
		assert.Contains(t, []int64{9, 10}, limit, "moved once at most")
		for _, s := range slots[1:] {
			require.NoError(t, s.Dropped(ctx))
		}
		if limit == 10 {
			assert.Equal(t, int64(9), limitOf(t, plain), "one decrease in the window")
		} else {
			assert.Equal(t, int64(9), limitOf(t, plain), "a decrease at most once per window")
		}
	})
}

// Instances that share a key with different Min and Max each keep the
// limit within their own bounds, as they read it and as they write it,
// and an Ignore never rewrites the stored limit, even one outside the
// bounds of the instance that reports it.
func TestAdversaryMixedBoundsStayWithinEach(t *testing.T) {
	b := redistest.Redis(t)
	ctx := context.Background()
	low, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 10, Initial: 8, Window: time.Millisecond})
	high := newLimiterOn(t, b.Client, adaptive.Config{Key: key, Min: 5, Max: 20, Initial: 8, Window: time.Millisecond})
	keys, _ := adaptive.Keys(key)
	stored := func() int64 {
		n, err := b.Client.HGet(ctx, keys[0], "limit").Int64()
		require.NoError(t, err)
		return n
	}
	for range 10 { // low drives the limit to its Min, 1
		require.NoError(t, take(t, low, 1)[0].Dropped(ctx))
		time.Sleep(3 * time.Millisecond)
	}
	assert.Equal(t, int64(1), stored())
	assert.Equal(t, int64(1), limitOf(t, low))
	assert.Equal(t, int64(5), limitOf(t, high), "read within high's bounds")

	s := take(t, high, 1)[0]
	require.NoError(t, s.Ignore(ctx))
	assert.Equal(t, int64(1), stored(), "an Ignore writes nothing")
	_, err := low.TryAcquire(ctx)
	require.NoError(t, err, "low's limit is 1 and nothing is held")
	_, err = low.TryAcquire(ctx)
	require.ErrorIs(t, err, adaptive.ErrLimited, "low grants nothing beyond its own limit of 1")

	for range 20 { // high fills and grows the limit to its Max, 20
		slots := take(t, high, int(limitOf(t, high))-int(inUse(t, high)))
		require.NoError(t, slots[0].Success(ctx))
		for _, s := range slots[1:] {
			require.NoError(t, s.Ignore(ctx))
		}
		time.Sleep(3 * time.Millisecond)
	}
	assert.Equal(t, int64(20), stored())
	assert.Equal(t, int64(10), limitOf(t, low), "read within low's bounds")
	for range 3 {
		require.NoError(t, take(t, low, 1)[0].Dropped(ctx))
		time.Sleep(3 * time.Millisecond)
		n := stored()
		assert.True(t, n >= 1 && n <= 10, "low wrote %d, outside its bounds", n)
	}
}

// At the edge of Lua's numbers: a Max just below 2^26 and a Step as large
// grow the limit to Max and not past it; a hand-off's notice, which packs
// the slots in use with the limit, reports that limit exactly; a Factor
// near 1 takes one slot off, and a tiny Factor goes to Min.
func TestAdversaryLimitEdges(t *testing.T) {
	b := redistest.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const top = 1<<26 - 1
	rec := &recorder{}
	l, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: top, Initial: 1, Step: top, Window: time.Millisecond, Observer: rec})
	s := take(t, l, 1)[0]
	done := make(chan *adaptive.Slot, 1)
	go func() {
		w, err := l.Acquire(ctx)
		assert.NoError(t, err)
		done <- w
	}()
	eventually(t, 5*time.Second, func() bool {
		info, err := l.Inspect(ctx)
		return err == nil && info.Waiters == 1
	}, "the waiter never queued")
	require.NoError(t, s.Success(ctx)) // 1 of 1 and a waiter: up to Max, and handed on
	w := <-done
	assert.Equal(t, int64(top), limitOf(t, l))
	acquired := rec.of(observe.Acquired)
	require.Len(t, acquired, 2)
	assert.Equal(t, [2]int64{1, top}, [2]int64{acquired[1].InUse, acquired[1].Limit}, "the notice's value, unpacked")
	time.Sleep(3 * time.Millisecond)
	more := take(t, l, 1)[0]
	require.NoError(t, w.Success(ctx))
	assert.Equal(t, int64(top), limitOf(t, l), "not past Max")
	time.Sleep(3 * time.Millisecond)
	require.NoError(t, more.Dropped(ctx))
	assert.Equal(t, int64(math.Floor(top*0.9)), limitOf(t, l))

	near := newLimiterOn(t, b.Client, adaptive.Config{Key: key, Min: 1, Max: top, Factor: 0.9999999999, Window: time.Millisecond})
	before := limitOf(t, near)
	time.Sleep(3 * time.Millisecond)
	require.NoError(t, take(t, near, 1)[0].Dropped(ctx))
	assert.Equal(t, before-1, limitOf(t, near), "one slot off at least")

	tiny := newLimiterOn(t, b.Client, adaptive.Config{Key: key, Min: 3, Max: top, Factor: 5e-324, Window: time.Millisecond})
	time.Sleep(3 * time.Millisecond)
	require.NoError(t, take(t, tiny, 1)[0].Dropped(ctx))
	assert.Equal(t, int64(3), limitOf(t, tiny), "to Min")
	assert.Zero(t, inUse(t, l))
}

// SCRIPT FLUSH between any two calls, on every master, costs nothing:
// each call meets NOSCRIPT, sends the script again and runs once, a
// release whose reply is lost included.
func TestAdversaryScriptFlushMidRun(t *testing.T) {
	redistest.EachCutBackend(t, adaptive.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		plain, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 10, Initial: 2, Window: time.Minute})
		l := newLimiterOn(t, client, plain.Config())
		flush := func() {
			t.Helper()
			if c, ok := b.Client.(*redis.ClusterClient); ok {
				require.NoError(t, c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
					return m.ScriptFlush(ctx).Err()
				}))
				return
			}
			require.NoError(t, b.Client.ScriptFlush(ctx).Err())
		}
		flush()
		slots := take(t, l, 2)
		flush()
		info, err := l.Inspect(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), info.InUse)

		done := make(chan *adaptive.Slot, 1)
		go func() {
			s, err := l.Acquire(ctx)
			assert.NoError(t, err)
			done <- s
		}()
		eventually(t, 5*time.Second, func() bool {
			info, err := plain.Inspect(ctx)
			return err == nil && info.Waiters == 1
		}, "the waiter never queued")
		flush()
		keys, _ := adaptive.Keys(key)
		cutter.Arm(1, "\r\neval\r\n", keys[1]) // the EVAL after NOSCRIPT loses its reply
		require.NoError(t, slots[0].Ignore(ctx), "freed once, handed to the waiter")
		assert.Equal(t, 1, cutter.Cuts(), "the EVAL's reply was cut, and it was sent again")
		w := <-done
		assert.Equal(t, int64(2), limitOf(t, plain), "an Ignore moves nothing")
		assert.Equal(t, int64(2), inUse(t, plain), "one freed, one handed")
		flush()
		require.NoError(t, slots[1].Ignore(ctx))
		require.NoError(t, w.Ignore(ctx))
		assert.Zero(t, inUse(t, plain))
	})
}

// No method panics on a nil or zero Limiter or Slot, with a nil or live
// context, and none of them sends anything.
func TestAdversaryZeroValuesNeverPanic(t *testing.T) {
	var nilCtx context.Context
	for _, ctx := range []context.Context{nilCtx, context.Background()} {
		for _, l := range []*adaptive.Limiter{nil, {}} {
			assert.NotPanics(t, func() {
				_, err := l.TryAcquire(ctx)
				assert.Error(t, err)
				_, err = l.Acquire(ctx)
				assert.Error(t, err)
				_, err = l.Limit(ctx)
				assert.Error(t, err)
				_, err = l.Inspect(ctx)
				assert.Error(t, err)
				_ = l.Config()
			})
		}
		for _, s := range []*adaptive.Slot{nil, {}} {
			assert.NotPanics(t, func() {
				assert.ErrorIs(t, s.Success(ctx), adaptive.ErrInvalidConfig)
				assert.ErrorIs(t, s.Dropped(ctx), adaptive.ErrInvalidConfig)
				assert.ErrorIs(t, s.Ignore(ctx), adaptive.ErrInvalidConfig)
				assert.Empty(t, s.ID())
			})
		}
	}
}

// A slot whose holder died lapses TTL after its grant, by the server's
// clock, and goes to the waiter queued for it, whose try comes just
// after the lapse; the dead holder's late release frees nothing then.
func TestAdversaryLapsedSlotGoesToWaiter(t *testing.T) {
	for _, b := range []*redistest.Backend{redistest.Redis(t), redistest.RedisCluster(t)} {
		t.Run(b.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			const ttl = 400 * time.Millisecond
			l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 1, TTL: ttl, Window: time.Minute})
			dead := take(t, l, 1)[0]
			info, err := l.Inspect(ctx)
			require.NoError(t, err)
			lapse := info.Holders[0].ExpiresAt
			w, err := l.Acquire(ctx)
			require.NoError(t, err)
			now := b.Now()
			assert.False(t, now.Before(lapse), "granted at %v, before the lapse at %v", now, lapse)
			assert.Less(t, now.Sub(lapse), 1500*time.Millisecond, "taken by a try soon after the lapse")
			assert.ErrorIs(t, dead.Dropped(ctx), adaptive.ErrNotHeld)
			info, err = l.Inspect(ctx)
			require.NoError(t, err)
			require.Len(t, info.Holders, 1)
			assert.Equal(t, w.ID(), info.Holders[0].ID)
			assert.Equal(t, int64(1), info.Limit, "the lapsed slot's drop counts nothing")
			require.NoError(t, w.Ignore(ctx))
		})
	}
}
