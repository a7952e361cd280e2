package adaptive_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/observe"
)

// How the limit moves: each test names the rule of release.lua it keeps.

// A burst of drops lowers the limit once per window: the first drop
// multiplies it by Factor, and the others, inside the window, count
// nothing; after the window, the drop of a slot granted before the
// decrease still counts nothing, and one granted after it counts.
func TestDropsDecreaseOncePerWindow(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 100, Initial: 20, Window: 300 * time.Millisecond})
		old := take(t, l, 10)
		for i, s := range old[:5] {
			require.NoError(t, s.Dropped(ctx), "drop %d", i)
		}
		assert.Equal(t, int64(18), limitOf(t, l), "20 × 0.9, once for the burst")

		b.Advance(400 * time.Millisecond)
		require.NoError(t, old[5].Dropped(ctx))
		assert.Equal(t, int64(18), limitOf(t, l), "a slot granted before the decrease counts nothing")

		fresh := take(t, l, 1)[0]
		require.NoError(t, fresh.Dropped(ctx))
		assert.Equal(t, int64(16), limitOf(t, l), "floor(18 × 0.9)")
		assert.Equal(t, int64(4), inUse(t, l), "every drop freed its slot")
	})
}

// A decrease takes at least one slot off, and never goes below Min.
func TestDecreaseStepsAndFloor(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	l, _ := newLimiter(t, b, adaptive.Config{Min: 2, Max: 10, Initial: 4, Window: 10 * time.Millisecond})
	for i, want := range []int64{3, 2, 2} { // floor(3.6) = 3, then 3 - 1, then Min
		s := take(t, l, 1)[0]
		require.NoError(t, s.Dropped(ctx))
		assert.Equal(t, want, limitOf(t, l), "step %d", i)
		b.Advance(20 * time.Millisecond)
	}
}

// Successes raise the limit by Step while it is nearly in use, at most
// once per window and not within 5 windows of a decrease, up to Max; a
// success with the limit far from in use raises nothing.
func TestSuccessesIncreaseNearFull(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 12, Initial: 10, Step: 2, Window: 300 * time.Millisecond})
		few := take(t, l, 5)
		require.NoError(t, few[0].Success(ctx))
		assert.Equal(t, int64(10), limitOf(t, l), "5 of 10 in use: not nearly in use")

		full := take(t, l, 6) // 10 of 10
		require.NoError(t, full[0].Success(ctx))
		assert.Equal(t, int64(12), limitOf(t, l), "10 of 10 in use: + Step")
		more := take(t, l, 3) // 12 of 12
		require.NoError(t, more[0].Success(ctx))
		assert.Equal(t, int64(12), limitOf(t, l), "within the window, and at Max")

		require.NoError(t, more[1].Dropped(ctx))
		assert.Equal(t, int64(10), limitOf(t, l), "floor(12 × 0.9)")
		b.Advance(400 * time.Millisecond)
		assert.Equal(t, int64(10), inUse(t, l), "10 of 10 in use")
		require.NoError(t, more[2].Success(ctx))
		assert.Equal(t, int64(10), limitOf(t, l), "a window after the decrease: it holds")

		last := take(t, l, 1)[0] // 10 of 10
		b.Advance(1200 * time.Millisecond)
		require.NoError(t, last.Success(ctx))
		assert.Equal(t, int64(12), limitOf(t, l), "5 windows after the decrease, nearly in use again")
	})
}

// climber keeps every slot of a limit taken, and frees one at a time with
// Success to move the limit.
type climber struct {
	t    *testing.T
	b    *redistest.Backend
	l    *adaptive.Limiter
	held []*adaptive.Slot
}

// climb waits advance, frees one slot of the full limit with Success,
// checks the limit, and takes the free slots again.
func (c *climber) climb(advance time.Duration, want int64, why string) {
	c.t.Helper()
	c.b.Advance(advance)
	require.NoError(c.t, c.held[0].Success(context.Background()))
	c.held = c.held[1:]
	limit := limitOf(c.t, c.l)
	assert.Equal(c.t, want, limit, why)
	c.held = append(c.held, take(c.t, c.l, int(limit)-len(c.held))...)
}

// dropAfter takes a slot, drops it after delay, and returns the drop
// delay the limit keeps.
func dropAfter(t *testing.T, b *redistest.Backend, l *adaptive.Limiter, delay time.Duration) time.Duration {
	t.Helper()
	ctx := context.Background()
	slow := take(t, l, 1)[0]
	info, err := l.Inspect(ctx)
	require.NoError(t, err)
	assert.Zero(t, info.DropDelay, "no drop yet")
	b.Advance(delay)
	require.NoError(t, slow.Dropped(ctx))
	info, err = l.Inspect(ctx)
	require.NoError(t, err)
	if b.Real { // and the round trips, on the server's clock
		require.GreaterOrEqual(t, info.DropDelay, delay, "from the grant to the drop")
	} else {
		require.Equal(t, delay, info.DropDelay, "from the grant to the drop")
	}
	return info.DropDelay
}

// Near the limit before the last drop that counted, the limit climbs one
// Step per two drop delays (the time the dropped call took from its grant
// to its Dropped), and holds for a drop delay after the drop: each step's
// overshoot can show, and be counted, before the next step. Past that
// peak plus a Step, it climbs one Step per Window again.
func TestClimbNearThePeakPacedByTheDropDelay(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 20, Initial: 10, Window: 100 * time.Millisecond})
		delay := dropAfter(t, b, l, 1500*time.Millisecond)
		assert.Equal(t, int64(9), limitOf(t, l), "10 × 0.9")

		c := &climber{t: t, b: b, l: l, held: take(t, l, 9)}
		c.climb(600*time.Millisecond, 9, "past 5 windows, within a drop delay of the drop: it holds")
		c.climb(delay, 10, "a drop delay after the drop: a step")
		c.climb(delay, 10, "a drop delay after the step, near the peak: it holds")
		if !b.Real { // to the ms
			c.climb(delay-10*time.Millisecond, 10, "10ms short of two drop delays after the step")
			c.climb(10*time.Millisecond, 11, "two drop delays after the step")
		} else {
			c.climb(delay, 11, "two drop delays after the step")
		}
		c.climb(150*time.Millisecond, 12, "at the peak plus a step: a step per window")
		c.climb(150*time.Millisecond, 13, "a step per window")
	})
}

// A limit cut more than two Steps below the peak climbs one Step per
// Window up to two Steps below it, and from there one per two drop
// delays.
func TestClimbBelowThePeakPacedByTheWindow(t *testing.T) {
	b := redistest.Miniredis(t)
	l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 50, Initial: 40, Window: 100 * time.Millisecond})
	delay := dropAfter(t, b, l, time.Second)
	assert.Equal(t, int64(36), limitOf(t, l), "40 × 0.9")

	c := &climber{t: t, b: b, l: l, held: take(t, l, 36)}
	c.climb(delay, 37, "a drop delay after the drop: a step")
	c.climb(100*time.Millisecond, 38, "4 steps below the peak: a step per window")
	c.climb(100*time.Millisecond, 38, "2 steps below the peak: a step per two drop delays")
	c.climb(2*delay-100*time.Millisecond, 39, "two drop delays after the step")
}

// The drop delay counts up to 20 windows: one call that hung before its
// Dropped does not slow the limit for long. A Limiter with a shorter
// Window counts it up to 20 of its own.
func TestDropDelayUpTo20Windows(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	l, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 20, Initial: 10, TTL: 2 * time.Hour, Window: 10 * time.Millisecond})
	hung := take(t, l, 1)[0]
	b.Advance(time.Hour)
	require.NoError(t, hung.Dropped(ctx))
	info, err := l.Inspect(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(9), info.Limit)
	assert.Equal(t, 200*time.Millisecond, info.DropDelay)

	// A Limiter of a 1s Window keeps 20s; one of 10ms holds for 200ms.
	long := newLimiterOn(t, b.Client, adaptive.Config{Key: key, Min: 1, Max: 20, TTL: 2 * time.Hour, Window: time.Second})
	b.Advance(time.Second)
	hung = take(t, long, 1)[0]
	b.Advance(time.Hour)
	require.NoError(t, hung.Dropped(ctx))
	info, err = l.Inspect(ctx)
	require.NoError(t, err)
	assert.Equal(t, 20*time.Second, info.DropDelay)
	c := &climber{t: t, b: b, l: l, held: take(t, l, int(info.Limit))}
	c.climb(150*time.Millisecond, info.Limit, "within 200ms of the drop")
	c.climb(100*time.Millisecond, info.Limit+1, "200ms, 20 of its windows, after the drop")
}

// Ignore frees the slot and leaves the limit as it is, full or not, and
// so does a drop or a success on a slot whose lease lapsed.
func TestIgnoreChangesNothing(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 10, Initial: 3, Window: time.Millisecond})
		slots := take(t, l, 3)
		for _, s := range slots {
			require.NoError(t, s.Ignore(ctx))
		}
		assert.Equal(t, int64(3), limitOf(t, l))
		assert.Zero(t, inUse(t, l))
	})
}

// The Observer hears of each move of the limit, before the release's
// final event, with the limit before and after.
func TestObserverReportsLimitChanges(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	rec := &recorder{}
	l, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 10, Initial: 2, Window: time.Millisecond, Observer: rec})
	slots := take(t, l, 2)
	require.NoError(t, slots[0].Success(ctx)) // 2 of 2: up to 3
	b.Advance(2 * time.Millisecond)
	require.NoError(t, slots[1].Dropped(ctx)) // down to 2
	b.Advance(2 * time.Millisecond)
	s := take(t, l, 1)[0]
	require.NoError(t, s.Ignore(ctx))

	changes := rec.of(observe.LimitChanged)
	require.Len(t, changes, 2)
	assert.Equal(t, [2]int64{2, 3}, [2]int64{changes[0].Units, changes[0].Limit})
	assert.Equal(t, [2]int64{3, 2}, [2]int64{changes[1].Units, changes[1].Limit})
	assert.Equal(t, "adaptive", changes[0].Package)
	assert.Equal(t, key, changes[0].Key)
	assert.Equal(t, "Success", changes[0].Op)
	assert.Equal(t, int64(1), changes[0].InUse)

	var ops []string
	for _, e := range rec.of(observe.Released) {
		assert.True(t, e.Held)
		ops = append(ops, e.Op)
	}
	assert.Equal(t, []string{"Success", "Dropped", "Ignore"}, ops)
	acquired := rec.of(observe.Acquired)
	require.Len(t, acquired, 3)
	assert.Equal(t, [2]int64{2, 2}, [2]int64{acquired[1].InUse, acquired[1].Limit})
}
