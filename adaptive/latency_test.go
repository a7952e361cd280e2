package adaptive_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/observe"
)

// How Config.RTTTolerance reads latency: each test names the promise of
// release.lua's latency rule it keeps.

// estimate returns the latency estimate of l's key.
func estimate(t *testing.T, l *adaptive.Limiter) (recent, noLoad time.Duration) {
	t.Helper()
	info, err := l.Inspect(context.Background())
	require.NoError(t, err)
	return info.Latency, info.NoLoadLatency
}

// stateOf returns the fields of the state hash of key.
func stateOf(t *testing.T, client redis.UniversalClient, key string) map[string]string {
	t.Helper()
	keys, _ := adaptive.Keys(key)
	m, err := client.HGetAll(context.Background(), keys[0]).Result()
	require.NoError(t, err)
	return m
}

// Every Limiter of a key feeds one estimate, on the server's clock: the
// latency from grant to Success of a call made through one Limiter is
// read through another; a window whose mean latency exceeds the
// tolerance × the no-load latency lowers the one shared limit.
func TestLatencyEstimateIsShared(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		one, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 100, Initial: 10, Window: 50 * time.Millisecond, RTTTolerance: 2})
		other := newLimiterOn(t, b.NewClient(t), adaptive.Config{Key: key, Min: 1, Max: 100, Initial: 10, Window: 50 * time.Millisecond, RTTTolerance: 2})

		fast := take(t, one, 1)[0]
		b.Advance(5 * time.Millisecond)
		require.NoError(t, fast.Success(ctx))
		recent, noLoad := estimate(t, other)
		assert.Zero(t, recent, "no window has ended")
		if b.Real {
			assert.GreaterOrEqual(t, noLoad, 5*time.Millisecond)
		} else {
			assert.Equal(t, 5*time.Millisecond, noLoad)
		}

		slow := take(t, other, 1)[0]
		b.Advance(time.Second)
		require.NoError(t, slow.Success(ctx))
		assert.Equal(t, int64(5), limitOf(t, one), "a mean of 5ms and 1s is past 2 × 5ms: halved, at most")
		recent, shared := estimate(t, one)
		assert.Equal(t, noLoad, shared, "the least latency stays")
		if b.Real {
			assert.GreaterOrEqual(t, recent, 500*time.Millisecond)
		} else {
			assert.Equal(t, 502500*time.Microsecond, recent, "(5ms + 1005ms) / 2")
		}
	})
}

// The latency rule, step by step on miniredis's clock: a window's mean
// within the tolerance moves nothing; past it, the limit goes down to
// the capacity the latency shows, at most halved; it holds for 5 windows
// after a decrease; a call granted before the decrease does not count in
// the next window's mean; within the tolerance again, successes raise the
// limit. The Observer hears of the estimate with each move.
func TestLatencyPastToleranceLowersLimit(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	rec := &recorder{}
	l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 100, Initial: 10, Window: 100 * time.Millisecond, RTTTolerance: 2, Observer: rec})
	ms := time.Millisecond

	call := func(latency time.Duration) {
		t.Helper()
		s := take(t, l, 1)[0]
		b.Advance(latency)
		require.NoError(t, s.Success(ctx))
	}
	call(10 * ms)
	call(30 * ms)
	b.Advance(100 * ms)
	call(10 * ms) // a window past the first success: the mean of 10, 30 and 10
	recent, noLoad := estimate(t, l)
	assert.Equal(t, [2]time.Duration{16666 * time.Microsecond, 10 * ms}, [2]time.Duration{recent, noLoad})
	assert.Equal(t, int64(10), limitOf(t, l), "16.7ms is within 2 × 10ms")

	early := take(t, l, 2) // granted before the decrease below
	call(50 * ms)
	call(60 * ms) // 110ms into the window: the mean of 50 and 60
	assert.Equal(t, int64(5), limitOf(t, l), "55ms past 2 × 10ms: 10 × 10/55 is 1, halved at most")
	recent, _ = estimate(t, l)
	assert.Equal(t, 55*ms, recent)
	changes := rec.of(observe.LimitChanged)
	require.Len(t, changes, 1)
	assert.Equal(t, [2]int64{10, 5}, [2]int64{changes[0].Units, changes[0].Limit})
	assert.Equal(t, [2]time.Duration{55 * ms, 10 * ms}, [2]time.Duration{changes[0].Latency, changes[0].NoLoadLatency})

	b.Advance(10 * ms)
	call(110 * ms)
	assert.Equal(t, int64(5), limitOf(t, l), "within 5 windows of the decrease: it holds")

	b.Advance(400 * ms)
	filler := take(t, l, 3) // 5 of 5 in use
	require.NoError(t, early[0].Success(ctx))
	recent, _ = estimate(t, l)
	assert.Equal(t, 110*ms, recent, "a call granted before the decrease feeds no window's mean")
	assert.Equal(t, int64(5), limitOf(t, l), "full, past the hold, but the recent latency is past the tolerance: no step")
	for _, s := range filler {
		require.NoError(t, s.Ignore(ctx))
	}

	call(110 * ms)
	assert.Equal(t, int64(2), limitOf(t, l), "past the hold, 110ms: 5 halved, at most")
	require.NoError(t, early[1].Ignore(ctx))

	b.Advance(600 * ms)
	full := take(t, l, 2)
	b.Advance(10 * ms)
	require.NoError(t, full[0].Success(ctx))
	assert.Equal(t, int64(3), limitOf(t, l), "10ms, within the tolerance, 2 of 2 in use: + Step")
	require.NoError(t, full[1].Ignore(ctx))
	released := rec.of(observe.Released)
	last := released[len(released)-1]
	assert.Equal(t, [2]time.Duration{10 * ms, 10 * ms}, [2]time.Duration{last.Latency, last.NoLoadLatency})
}

// The no-load latency is the least of this period of LatencyPeriod
// windows and the last: a system that slowed down is learnt within two
// periods, one that sped up at once. A latency counts up to 2^20 ms.
func TestNoLoadLatencyKeptCurrent(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	window := 10 * time.Millisecond
	period := adaptive.LatencyPeriod * window
	l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 100, Initial: 10, Window: window, TTL: 2 * time.Hour, RTTTolerance: 1.5})
	call := func(latency time.Duration) time.Duration {
		t.Helper()
		s := take(t, l, 1)[0]
		b.Advance(latency)
		require.NoError(t, s.Success(ctx))
		_, noLoad := estimate(t, l)
		return noLoad
	}
	ms := time.Millisecond
	assert.Equal(t, 10*ms, call(10*ms))
	b.Advance(period)
	assert.Equal(t, 10*ms, call(50*ms), "a period on: the last period's 10ms")
	assert.Equal(t, 10*ms, call(50*ms))
	b.Advance(period)
	assert.Equal(t, 50*ms, call(50*ms), "two periods on: 50ms")
	assert.Equal(t, 5*ms, call(5*ms), "faster: at once")

	b.Advance(2 * period)
	assert.Equal(t, 5*ms, call(time.Hour), "the last period's 5ms")
	b.Advance(period)
	assert.Equal(t, (1<<20)*ms, call(time.Hour), "an hour counts as 2^20 ms")
}

// A Success whose reply is lost, sent again, feeds its latency to the
// estimate once.
func TestLatencyResentCountsOnce(t *testing.T) {
	redistest.EachCutBackend(t, adaptive.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		plain, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 100, Initial: 10, Window: time.Hour, RTTTolerance: 2})
		l := newLimiterOn(t, client, plain.Config())
		slots := take(t, l, 2)
		leases, _ := adaptive.Keys(key)

		b.Advance(5 * time.Millisecond)
		cutter.Arm(1, "evalsha", leases[1])
		require.NoError(t, slots[0].Success(ctx))
		cutter.RequireOneMore(t, 0)
		state := stateOf(t, b.Client, key)
		assert.Equal(t, "1", state["rttn"], "one latency in the window")
		assert.Equal(t, state["rttmin"], state["rttsum"], "the one latency")
		require.NoError(t, slots[1].Ignore(ctx))
	})
}

// With RTTTolerance 0, the scripts read and write no latency: the state
// holds what it always held, and Inspect and the Observer report none.
func TestNoToleranceKeepsNoLatency(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rec := &recorder{}
		l, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 10, Initial: 2, Window: time.Millisecond, Observer: rec})
		slots := take(t, l, 2)
		b.Advance(5 * time.Millisecond)
		require.NoError(t, slots[0].Success(ctx))
		b.Advance(5 * time.Millisecond)
		require.NoError(t, slots[1].Dropped(ctx))
		require.Len(t, rec.of(observe.LimitChanged), 2, "up, then down")

		for field := range stateOf(t, b.Client, key) {
			assert.Contains(t, []string{"limit", "down", "up", "delay", "peak"}, field)
		}
		recent, noLoad := estimate(t, l)
		assert.Zero(t, recent)
		assert.Zero(t, noLoad)
		for _, e := range rec.events {
			assert.Zero(t, e.Latency, "%v", e.Kind)
			assert.Zero(t, e.NoLoadLatency, "%v", e.Kind)
		}
	})
}

// The no-load latency counts as 1 ms at least: calls that take under a
// millisecond, to the server's clock, do not make every later latency
// look past the tolerance.
func TestNoLoadLatencyAtLeastAMillisecond(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 100, Initial: 10, Window: time.Millisecond, RTTTolerance: 2})
	for _, took := range []time.Duration{0, 2 * time.Millisecond} {
		s := take(t, l, 1)[0]
		b.Advance(took)
		require.NoError(t, s.Success(ctx))
	}
	recent, noLoad := estimate(t, l)
	assert.Equal(t, [2]time.Duration{time.Millisecond, 0}, [2]time.Duration{recent, noLoad}, "a mean of 0 and 2ms; the least, 0")
	assert.Equal(t, int64(10), limitOf(t, l), "1ms is within 2 × 1ms")
}
