package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// A step is one AllowN at a moment of the server's clock, and what it
// must return, as in x/time/rate's tests.
type step struct {
	at        time.Duration // since the test's start, on the server's clock
	n         int64
	allowed   bool
	remaining int64
	retry     time.Duration
	reset     time.Duration
}

const ms = time.Millisecond

var stepTests = []struct {
	name  string
	limit ratelimit.Limit
	steps []step
}{{
	name:  "gcra burst then smooth",
	limit: ratelimit.PerSecond(10), // one event per 100ms, bursts of 10
	steps: []step{
		{0, 10, true, 0, 0, time.Second},
		{0, 1, false, 0, 100 * ms, time.Second}, // refused: nothing counted
		{0, 1, false, 0, 100 * ms, time.Second},
		{100 * ms, 1, true, 0, 0, time.Second},
		{100 * ms, 1, false, 0, 100 * ms, time.Second},
		{250 * ms, 1, true, 0, 0, 950 * ms},
		{250 * ms, 0, true, 0, 0, 950 * ms}, // n 0 asks without counting
		{2 * time.Second, 1, true, 9, 0, 100 * ms},
		{2 * time.Second, 11, false, 9, ratelimit.Never, 100 * ms}, // n > burst
		{2 * time.Second, 9, true, 0, 0, time.Second},
	},
}, {
	name:  "gcra burst below rate",
	limit: ratelimit.Limit{Rate: 10, Period: time.Second, Burst: 3},
	steps: []step{
		{0, 3, true, 0, 0, 300 * ms},
		{0, 1, false, 0, 100 * ms, 300 * ms},
		{50 * ms, 2, false, 0, 150 * ms, 250 * ms},
		{200 * ms, 2, true, 0, 0, 300 * ms},
		{200 * ms, 4, false, 0, ratelimit.Never, 300 * ms},
	},
}, {
	name:  "gcra window edge",
	limit: ratelimit.PerSecond(5), // no edge: 5 at 999ms leave nothing for 1000ms
	steps: []step{
		{0, 1, true, 4, 0, 200 * ms},
		{999 * ms, 5, true, 0, 0, time.Second},
		{1000 * ms, 5, false, 0, 999 * ms, 999 * ms},
		{1000 * ms, 1, false, 0, 199 * ms, 999 * ms},
	},
}, {
	name:  "gcra fractional rate: 1 per 3 minutes",
	limit: ratelimit.Limit{Rate: 1, Period: 3 * time.Minute},
	steps: []step{
		{0, 1, true, 0, 0, 3 * time.Minute},
		{0, 1, false, 0, 3 * time.Minute, 3 * time.Minute},
		{3*time.Minute - ms, 1, false, 0, ms, ms},
		{3 * time.Minute, 1, true, 0, 0, 3 * time.Minute},
		{3 * time.Minute, 2, false, 0, ratelimit.Never, 3 * time.Minute},
	},
}, {
	name:  "gcra share not a whole µs: 3 per second",
	limit: ratelimit.PerSecond(3), // 333,333 1/3µs an event, kept exactly
	steps: []step{
		{0, 3, true, 0, 0, time.Second},
		{0, 1, false, 0, 333334 * time.Microsecond, time.Second}, // waits rounded up to the µs
		{334 * ms, 1, true, 0, 0, 999334 * time.Microsecond},     // TAT 1,333,333 1/3µs
	},
}, {
	name:  "fixed window",
	limit: ratelimit.Limit{Rate: 5, Period: time.Second, Algorithm: ratelimit.FixedWindow},
	steps: []step{
		{0, 3, true, 2, 0, time.Second},
		{0, 3, false, 2, time.Second, time.Second}, // refused: the count stays 3
		{500 * ms, 2, true, 0, 0, 500 * ms},
		{900 * ms, 1, false, 0, 100 * ms, 100 * ms},
		{900 * ms, 6, false, 0, ratelimit.Never, 100 * ms}, // n > rate
		{900 * ms, 0, true, 0, 0, 100 * ms},
		{1001 * ms, 5, true, 0, 0, time.Second}, // a new window
	},
}, {
	name:  "fixed window edge lets twice the rate through",
	limit: ratelimit.Limit{Rate: 5, Period: time.Second, Algorithm: ratelimit.FixedWindow},
	steps: []step{
		{0, 1, true, 4, 0, time.Second},
		{999 * ms, 4, true, 0, 0, ms},
		{1001 * ms, 5, true, 0, 0, time.Second}, // 9 events in 2ms
		{1001 * ms, 1, false, 0, time.Second, time.Second},
	},
}, {
	name:  "fixed window fractional rate: 1 per 3 minutes",
	limit: ratelimit.Limit{Rate: 1, Period: 3 * time.Minute, Algorithm: ratelimit.FixedWindow},
	steps: []step{
		{0, 1, true, 0, 0, 3 * time.Minute},
		{time.Minute, 1, false, 0, 2 * time.Minute, 2 * time.Minute},
		{3*time.Minute + ms, 1, true, 0, 0, 3 * time.Minute},
	},
}}

// The algorithms step by step on miniredis, whose clock moves only when
// the test moves it.
func TestSteps(t *testing.T) {
	for _, tt := range stepTests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			b := redistest.Miniredis(t)
			limiter := newLimiter(t, b.Client)
			key := b.Key(t, "rl-test:")
			var now time.Duration
			for i, s := range tt.steps {
				b.Advance(s.at - now)
				now = s.at
				res, err := limiter.AllowN(ctx, key, tt.limit, s.n)
				require.NoError(t, err, "step %d", i)
				got := step{s.at, s.n, res.Allowed, res.Remaining, res.RetryAfter, res.ResetAfter}
				assert.Equal(t, s, got, "step %d", i)
			}
		})
	}
}

// A GCRA key lapses when it is back to its full allowance, and holds one
// small integer until then. An event is a second's share, so that the key
// outlives the reads that follow AllowN on a busy machine; its TAT is
// bounded by the server's clock read before and after.
func TestGCRAKeyLapsesWhenFull(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		key := b.Key(t, "rl-test:")
		limit := ratelimit.Limit{Rate: 10, Period: 10 * time.Second, Burst: 2} // a second an event
		before := b.Now()
		res, err := limiter.AllowN(ctx, key, limit, 2)
		require.NoError(t, err)
		after := b.Now()
		require.True(t, res.Allowed)
		assert.Equal(t, 2*time.Second, res.ResetAfter)
		assert.Equal(t, limit, res.Limit)
		assert.Zero(t, b.Client.Exists(ctx, key).Val(), "nothing at the key itself")
		pttl := b.Client.PTTL(ctx, gcraKey(key)).Val()
		assert.True(t, pttl > 0 && pttl <= 2*time.Second, "PTTL %v", pttl)
		value, err := b.Client.Get(ctx, gcraKey(key)).Int64()
		require.NoError(t, err, "one integer")
		assert.GreaterOrEqual(t, value, before.UnixMicro()+2e6, "the TAT, µs on the server's clock: 2s after AllowN ran")
		assert.LessOrEqual(t, value, after.UnixMicro()+2e6, "the TAT, µs on the server's clock: 2s after AllowN ran")
		b.Advance(res.ResetAfter + 100*ms)
		assert.Zero(t, b.Client.Exists(ctx, gcraKey(key)).Val(), "gone once full")
	})
}
