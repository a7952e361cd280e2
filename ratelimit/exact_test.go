package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// exactLimits are GCRA limits whose share of a period (Period/Rate) is not
// a whole µs, beside two whose share is, each with the longest step of
// the clock that keeps a caller who takes every event as soon as it may
// from losing any time (a step of at most (Burst-1)×Period/Rate, after
// which the theoretical arrival time is never behind the clock), and the
// span of time the test runs it for.
var exactLimits = []struct {
	limit    ratelimit.Limit
	maxStep  time.Duration
	span     time.Duration
	wasShort string // what an event's share rounded up to the µs kept
}{
	{ratelimit.PerSecond(999_999), 50 * ms, 3 * time.Second, "500,000 per second"},
	{ratelimit.Limit{Rate: 999_999, Period: time.Second, Burst: 100}, 99 * time.Microsecond, 20 * ms, "500,000 per second"},
	{ratelimit.Limit{Rate: 999_999, Period: time.Second, Burst: 2}, time.Microsecond, time.Millisecond, "500,000 per second"},
	{ratelimit.PerSecond(300_000), 50 * ms, 3 * time.Second, "250,000 per second"},
	{ratelimit.Limit{Rate: 300_000, Period: time.Second, Burst: 2}, 3 * time.Microsecond, 2 * ms, "250,000 per second"},
	{ratelimit.Limit{Rate: 300_000, Period: time.Second, Burst: 5000}, 16 * ms, time.Second, "250,000 per second"},
	{ratelimit.Limit{Rate: 700_001, Period: 3 * time.Second, Burst: 10}, 38 * time.Microsecond, 3 * ms, "600,000 per 3 seconds"},
	{ratelimit.PerSecond(3), 300 * ms, 30 * time.Second, "2.99999 per second"},
	{ratelimit.Limit{Rate: 3, Period: time.Second, Burst: 10}, 3 * time.Second, time.Minute, "2.99999 per second"},
	{ratelimit.Limit{Rate: 7, Period: 3 * time.Second}, 2500 * ms, time.Minute, "6.99999 per 3 seconds"},
	{ratelimit.Limit{Rate: 7, Period: 3 * time.Second, Burst: 2}, 428 * ms, 30 * time.Second, "6.99999 per 3 seconds"},
	{ratelimit.Limit{Rate: 1000, Period: time.Millisecond}, time.Millisecond, 50 * ms, "the same: a whole µs"},
	{ratelimit.Limit{Rate: 10, Period: time.Second, Burst: 3}, 200 * ms, 10 * time.Second, "the same: a whole µs"},
}

// admits is how many events a limit allows in elapsed µs from its first
// event to a caller who takes each as soon as it may: Burst + elapsed ×
// Rate/Period, rounded down, the most its promise allows.
func admits(limit ratelimit.Limit, elapsed int64) int64 {
	burst := limit.Burst
	if burst == 0 {
		burst = limit.Rate
	}
	n := new(big.Int).Mul(big.NewInt(elapsed), big.NewInt(limit.Rate))
	n.Quo(n, big.NewInt(limit.Period.Microseconds()))
	return burst + n.Int64()
}

// allowers are the two ways a test counts n events on one key: AllowN and
// AllowAll, which run different scripts.
var allowers = []struct {
	name  string
	allow func(ctx context.Context, l *ratelimit.Limiter, key string, limit ratelimit.Limit, n int64) (ratelimit.Result, error)
}{
	{"AllowN", func(ctx context.Context, l *ratelimit.Limiter, key string, limit ratelimit.Limit, n int64) (ratelimit.Result, error) {
		return l.AllowN(ctx, key, limit, n)
	}},
	{"AllowAll", func(ctx context.Context, l *ratelimit.Limiter, key string, limit ratelimit.Limit, n int64) (ratelimit.Result, error) {
		rs, err := l.AllowAll(ctx, []ratelimit.Rule{{Key: key, Limit: limit, N: n}})
		if err != nil {
			return ratelimit.Result{}, err
		}
		return rs[0], nil
	}},
}

// GCRA keeps its rate exactly, whether or not an event's share of a period
// is a whole µs: on miniredis, whose clock moves only when the test moves
// it, a caller takes at every step of the clock every event the limit
// allows (all of them in one call, then one more, which is refused), and
// the events taken since the first step are exactly Burst + elapsed ×
// Rate/Period, rounded down, at every step; the refusal's RetryAfter is
// exactly the wait for the next event, and its ResetAfter the time the
// events taken have paid for, each rounded up to the µs. Shares rounded
// up to the µs, as earlier releases kept them, fell short (wasShort).
func TestGCRAKeepsItsRateExactly(t *testing.T) {
	for _, a := range allowers {
		for i, tt := range exactLimits {
			t.Run(fmt.Sprintf("%s/%v", a.name, tt.limit), func(t *testing.T) {
				ctx := context.Background()
				b := redistest.Miniredis(t)
				limiter := newLimiter(t, b.Client)
				key := b.Key(t, "rl-test:")
				rng := rand.New(rand.NewPCG(uint64(i), 28))
				burst := tt.limit.Burst
				if burst == 0 {
					burst = tt.limit.Rate
				}
				var elapsed, taken int64
				for step := 0; ; step++ {
					res, err := limiter.AllowN(ctx, key, tt.limit, 0)
					require.NoError(t, err)
					if n := res.Remaining; n > 0 {
						res, err = a.allow(ctx, limiter, key, tt.limit, n)
						require.NoError(t, err)
						require.True(t, res.Allowed, "step %d: the %d events that remain are allowed", step, n)
						require.Zero(t, res.Remaining, "step %d", step)
						taken += n
					}
					res, err = a.allow(ctx, limiter, key, tt.limit, 1)
					require.NoError(t, err)
					require.False(t, res.Allowed, "step %d: one more is refused", step)
					require.Equal(t, admits(tt.limit, elapsed), taken,
						"step %d, %dµs on: earlier releases kept %s", step, elapsed, tt.wasShort)
					// The next event is due when the TAT, taken shares past
					// the start, is a burst less one share ahead of now.
					due := paid(tt.limit, taken+1-burst, elapsed)
					require.Equal(t, time.Duration(due)*time.Microsecond, res.RetryAfter, "step %d", step)
					require.Equal(t, time.Duration(paid(tt.limit, taken, elapsed))*time.Microsecond, res.ResetAfter, "step %d", step)
					if elapsed >= tt.span.Microseconds() {
						break
					}
					d := 1 + rng.Int64N(tt.maxStep.Microseconds())
					b.Advance(time.Duration(d) * time.Microsecond)
					elapsed += d
				}
				want := float64(burst) + float64(elapsed)*float64(tt.limit.Rate)/float64(tt.limit.Period.Microseconds())
				assert.InEpsilon(t, want, float64(taken), 0.01, "rate × time + burst over %v", tt.span)
			})
		}
	}
}

// paid is how long after elapsed µs the shares of n events, counted from
// the first step, run: n × Period/Rate - elapsed, rounded up to the µs.
func paid(limit ratelimit.Limit, n, elapsed int64) int64 {
	num := new(big.Int).Mul(big.NewInt(n), big.NewInt(limit.Period.Microseconds()))
	num.Sub(num, new(big.Int).Mul(big.NewInt(elapsed), big.NewInt(limit.Rate)))
	rate := big.NewInt(limit.Rate)
	num.Add(num, rate).Sub(num, big.NewInt(1)) // rounded up
	return num.Div(num, rate).Int64()
}

// One event at a time, a caller who calls Allow until it is refused at
// every µs takes exactly Burst + elapsed × Rate/Period events, rounded
// down, at rates of up to a million per second whose shares are not a
// whole µs.
func TestGCRAOneEventAtATime(t *testing.T) {
	for _, limit := range []ratelimit.Limit{
		{Rate: 999_999, Period: time.Second, Burst: 10},
		{Rate: 300_000, Period: time.Second, Burst: 2},
		{Rate: 700_001, Period: 3 * time.Second, Burst: 3},
	} {
		t.Run(limit.String(), func(t *testing.T) {
			ctx := context.Background()
			b := redistest.Miniredis(t)
			limiter := newLimiter(t, b.Client)
			key := b.Key(t, "rl-test:")
			var taken int64
			for elapsed := int64(0); elapsed <= 600; elapsed++ {
				for {
					res, err := limiter.Allow(ctx, key, limit)
					require.NoError(t, err)
					if !res.Allowed {
						break
					}
					taken++
				}
				require.Equal(t, admits(limit, elapsed), taken, "%dµs on", elapsed)
				b.Advance(time.Microsecond)
			}
		})
	}
}

// tatRat reads the TAT a GCRA limit keeps beside key: whole µs, or whole
// µs, '+', a remainder and '/', its denominator.
func tatRat(t *testing.T, b *redistest.Backend, key string) *big.Rat {
	t.Helper()
	value, err := b.Client.Get(context.Background(), gcraKey(key)).Result()
	require.NoError(t, err)
	m := regexp.MustCompile(`^(\d+)(?:\+(\d+)/(\d+))?$`).FindStringSubmatch(value)
	require.NotNil(t, m, "the TAT %q", value)
	tat, ok := new(big.Rat).SetString(m[1])
	require.True(t, ok)
	if m[2] != "" {
		rem, ok := new(big.Rat).SetString(m[2] + "/" + m[3])
		require.True(t, ok)
		require.Equal(t, -1, rem.Cmp(big.NewRat(1, 1)), "the remainder %q is below 1µs", value)
		tat.Add(tat, rem)
	}
	return tat
}

// On a real Redis and Cluster, whose clocks run on their own, a caller who
// takes every event the limit allows as soon as it learns of it, for a
// span, has taken, with what remains at the end, exactly Burst + elapsed
// × Rate/Period events, rounded down, elapsed being the server's time
// from the first call to the last: the test learns both from the TAT,
// which moves by exactly each event's share. Every limit's full burst
// lasts half a second or more, so that a caller slowed down by a busy
// machine loses no time.
func TestGCRAKeepsItsRateOnARealClock(t *testing.T) {
	limits := []ratelimit.Limit{
		ratelimit.PerSecond(999_999),
		{Rate: 999_999, Period: time.Second, Burst: 500_000},
		ratelimit.PerSecond(300_000),
		{Rate: 300_000, Period: time.Second, Burst: 150_000},
		{Rate: 7, Period: 3 * time.Millisecond, Burst: 2000},
		ratelimit.PerSecond(3),
		{Rate: 3, Period: time.Second, Burst: 2},
		{Rate: 7, Period: 3 * time.Second},
		{Rate: 7, Period: 3 * time.Second, Burst: 2},
	}
	for _, b := range []*redistest.Backend{redistest.Redis(t), redistest.RedisCluster(t)} {
		t.Run(b.Name, func(t *testing.T) {
			for _, limit := range limits {
				t.Run(limit.String(), func(t *testing.T) {
					t.Parallel()
					ctx := context.Background()
					limiter := newLimiter(t, b.Client)
					key := b.Key(t, "rl-test:")
					t.Cleanup(func() { b.Client.Del(context.Background(), gcraKey(key)) })
					burst := limit.Burst
					if burst == 0 {
						burst = limit.Rate
					}
					res, err := limiter.AllowN(ctx, key, limit, burst)
					require.NoError(t, err)
					require.True(t, res.Allowed, "a full burst at first")
					// The first call's time: the TAT less a burst's shares.
					start := tatRat(t, b, key)
					start.Sub(start, big.NewRat(burst*limit.Period.Microseconds(), limit.Rate))
					require.True(t, start.IsInt(), "the first call's time %v is a whole µs", start)

					taken := burst
					for end := time.Now().Add(200 * ms); time.Now().Before(end); {
						n := res.Remaining
						res, err = limiter.AllowN(ctx, key, limit, n)
						require.NoError(t, err)
						require.True(t, res.Allowed, "%d events that remained are allowed", n)
						taken += n
					}
					res, err = limiter.AllowN(ctx, key, limit, 0)
					require.NoError(t, err)
					// The last call's time: the TAT, rounded up, less the lead
					// the call reported, which it rounded up.
					tat := tatRat(t, b, key)
					last := new(big.Int).Div(new(big.Int).Add(tat.Num(), new(big.Int).Sub(tat.Denom(), big.NewInt(1))), tat.Denom())
					last.Sub(last, big.NewInt(res.ResetAfter.Microseconds()))
					elapsed := new(big.Int).Sub(last, start.Num()).Int64()
					require.Positive(t, res.ResetAfter, "the TAT never fell behind the clock")
					assert.Equal(t, admits(limit, elapsed), taken+res.Remaining,
						"%d taken and %d remaining in %dµs", taken, res.Remaining, elapsed)
					t.Logf("%d events in %dµs", taken+res.Remaining-burst, elapsed)
				})
			}
		})
	}
}

// A TAT kept in whole µs, as earlier releases and shares of whole µs keep
// it, is read as it was written; a share that is not a whole µs keeps the
// TAT's remainder beside it ("…+1/3"); and a remainder kept for a limit
// of another rate is rounded up to the next µs, so that the key is never
// less strict than its TAT. On miniredis, whose clock stands still.
func TestGCRAReadsEveryLayoutOfItsTime(t *testing.T) {
	ctx := context.Background()
	b := redistest.Miniredis(t)
	limiter := newLimiter(t, b.Client)
	now := b.Now().UnixMicro()
	third := ratelimit.PerSecond(3) // 333,333 1/3µs an event, bursts of 3

	key := b.Key(t, "rl-test:")
	t.Cleanup(func() { b.Client.Del(ctx, gcraKey(key)) })
	require.NoError(t, b.Client.Set(ctx, gcraKey(key), fmt.Sprint(now+700_000), time.Minute).Err())
	res, err := limiter.AllowN(ctx, key, third, 0)
	require.NoError(t, err)
	assert.Equal(t, ratelimit.Result{Allowed: true, Remaining: 0, ResetAfter: 700 * ms, Limit: ratelimit.Limit{Rate: 3, Period: time.Second, Burst: 3}}, res,
		"a TAT of whole µs 700ms ahead leaves 300ms: no whole share")
	res, err = limiter.Allow(ctx, key, third)
	require.NoError(t, err)
	assert.Equal(t, 33_334*time.Microsecond, res.RetryAfter, "700ms + 333,333 1/3µs is 33,333 1/3µs past a burst")

	b.Advance(33_334 * time.Microsecond)
	res, err = limiter.Allow(ctx, key, third)
	require.NoError(t, err)
	assert.True(t, res.Allowed)
	assert.Equal(t, fmt.Sprintf("%d+1/3", now+1_033_333), b.Client.Get(ctx, gcraKey(key)).Val(), "the remainder is kept")
	assert.Equal(t, time.Second, res.ResetAfter, "the lead, 999,999 1/3µs, rounded up")

	sevenths := ratelimit.Limit{Rate: 7, Period: 3 * time.Second, Burst: 10} // 428,571 3/7µs an event
	res, err = limiter.Allow(ctx, key, sevenths)
	require.NoError(t, err)
	assert.True(t, res.Allowed)
	assert.Equal(t, fmt.Sprintf("%d+3/7", now+1_033_334+428_571), b.Client.Get(ctx, gcraKey(key)).Val(),
		"the third rounded up to the µs, and a seventh's share added")
}

// A TAT with a remainder is read by a limit whose share is a whole µs,
// the remainder rounded up; and a string that is neither an integer nor
// an integer with a remainder below its denominator fails every call, on
// every layout a call tries first, with the key left as it was.
func TestGCRAReadsATimeWithARemainderOrFails(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		key := b.Key(t, "rl-test:")
		t.Cleanup(func() { b.Client.Del(ctx, gcraKey(key)) })
		whole := ratelimit.Limit{Rate: 10, Period: time.Hour} // 360,000,000µs an event
		now := b.Now().UnixMicro()
		require.NoError(t, b.Client.Set(ctx, gcraKey(key), fmt.Sprintf("%d+3/7", now+time.Minute.Microseconds()), time.Hour).Err())
		res, err := limiter.Allow(ctx, key, whole)
		require.NoError(t, err)
		require.True(t, res.Allowed)
		assert.Equal(t, fmt.Sprint(now+time.Minute.Microseconds()+1+360_000_000), b.Client.Get(ctx, gcraKey(key)).Val(),
			"the remainder rounded up to the µs, and a whole share added")

		fraction := ratelimit.Limit{Rate: 7, Period: time.Hour, Burst: 10}
		for _, value := range []string{"abc", "1+3/3", "1+1/0", "12+", "12+1", "12/7", "+1/3", "12+1/3x", "-5", "1e9", " 12"} {
			require.NoError(t, b.Client.Set(ctx, gcraKey(key), value, time.Hour).Err())
			for _, limit := range []ratelimit.Limit{whole, fraction} {
				for _, a := range allowers {
					_, err := a.allow(ctx, limiter, key, limit, 1)
					require.Error(t, err, "%q, %v, %s", value, limit, a.name)
					assert.Contains(t, err.Error(), "not a GCRA time", "%q, %v, %s", value, limit, a.name)
					assert.False(t, errors.Is(err, ratelimit.ErrOutcomeUnknown))
				}
			}
			assert.Equal(t, value, b.Client.Get(ctx, gcraKey(key)).Val(), "left as it was")
		}
	})
}

// The TAT a real Redis and Cluster keep, with its remainder, is exact:
// 3 events of 3 per second move it by exactly one second, and 7 events of
// 7 per 3 seconds by exactly 3 seconds, with no remainder left over.
func TestGCRAKeepsTheRemainderOnARealServer(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		for _, tt := range []struct {
			limit ratelimit.Limit
			rem   string // of the TAT after the first event
		}{
			{ratelimit.Limit{Rate: 3, Period: time.Second, Burst: 6}, "+1/3"},
			{ratelimit.Limit{Rate: 7, Period: 3 * time.Second, Burst: 14}, "+3/7"},
		} {
			key := b.Key(t, "rl-test:")
			t.Cleanup(func() { b.Client.Del(ctx, gcraKey(key)) })
			res, err := limiter.Allow(ctx, key, tt.limit)
			require.NoError(t, err)
			require.True(t, res.Allowed)
			first := tatRat(t, b, key)
			assert.Regexp(t, `^\d+`+regexp.QuoteMeta(tt.rem)+`$`, b.Client.Get(ctx, gcraKey(key)).Val(), "%v", tt.limit)
			for range tt.limit.Rate {
				res, err = limiter.Allow(ctx, key, tt.limit)
				require.NoError(t, err)
				require.True(t, res.Allowed, "%v", tt.limit)
			}
			moved := new(big.Rat).Sub(tatRat(t, b, key), first)
			assert.Equal(t, big.NewRat(tt.limit.Period.Microseconds(), 1).String(), moved.String(), "%v: Rate events move the TAT by Period", tt.limit)
			assert.Regexp(t, `^\d+`+regexp.QuoteMeta(tt.rem)+`$`, b.Client.Get(ctx, gcraKey(key)).Val(), "%v", tt.limit)
		}
	})
}

// A Burst of 1 spaces events at least a share apart, on a clock of whole
// µs: a limit whose share is not a whole µs and would so run more than 1%
// below its Rate is refused with an InexactLimitError that names what it
// would keep and the nearest limit that keeps the rate, with nothing
// sent; one within 1%, or with a share of whole µs, is kept.
func TestBurstOfOneTheClockCannotKeepIsRefused(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	limiter := newLimiter(t, b.Client)
	key := b.Key(t, "rl-test:")
	for _, tt := range []struct {
		limit   ratelimit.Limit
		spacing time.Duration
	}{
		{ratelimit.Limit{Rate: 300_000, Period: time.Second, Burst: 1}, 4 * time.Microsecond},
		{ratelimit.Limit{Rate: 999_999, Period: time.Second, Burst: 1}, 2 * time.Microsecond},
		{ratelimit.Limit{Rate: 10_204, Period: time.Second, Burst: 1}, 99 * time.Microsecond}, // 1.0098% below
	} {
		err := tt.limit.Validate()
		var inexact *ratelimit.InexactLimitError
		require.True(t, errors.As(err, &inexact), "%v: %v", tt.limit, err)
		assert.ErrorIs(t, err, ratelimit.ErrInvalidLimit)
		assert.ErrorIs(t, err, ratelimit.ErrInvalidArgument)
		assert.Equal(t, tt.limit, inexact.Limit)
		assert.Equal(t, tt.spacing, inexact.Spacing)
		nearest := tt.limit
		nearest.Burst = 2
		assert.Equal(t, nearest, inexact.Nearest)
		require.NoError(t, inexact.Nearest.Validate())
		_, err = limiter.Allow(ctx, key, tt.limit)
		assert.True(t, errors.As(err, &inexact), "%v: Allow returns it", tt.limit)
		_, err = limiter.AllowAll(ctx, []ratelimit.Rule{{Key: key, Limit: tt.limit}})
		assert.True(t, errors.As(err, &inexact), "%v: AllowAll returns it", tt.limit)
	}
	assert.EqualError(t, ratelimit.Limit{Rate: 300_000, Period: time.Second, Burst: 1}.Validate(),
		"ratelimit: invalid limit: 300000 per 1s (burst 1, gcra): a Burst of 1 keeps events 4µs apart on the server's clock of whole µs, "+
			"at most 250000 per 1s; 300000 per 1s (burst 2, gcra) keeps the rate exactly")
	for _, limit := range []ratelimit.Limit{
		{Rate: 3, Period: time.Second, Burst: 1},           // 333,334µs apart: 0.0002% below
		{Rate: 10_203, Period: time.Second, Burst: 1},      // 99µs apart: 0.9997% below
		{Rate: 1000, Period: time.Millisecond, Burst: 1},   // 1µs, whole
		{Rate: 300_000, Period: 3 * time.Second, Burst: 1}, // 10µs, whole
	} {
		require.NoError(t, limit.Validate(), "%v", limit)
	}
	assert.Zero(t, b.Client.Exists(ctx, gcraKey(key)).Val(), "nothing was sent")
}

// A re-sent Allow on a limit whose share is not a whole µs counts again,
// as the package documents: the second run counts only if the event still
// fits, so it can refuse early, but never admits beyond the limit, and
// the TAT keeps both runs' shares exactly.
func TestResentAllowOfAShareNotWholeNeverAdmitsBeyondTheLimit(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client, cutter := b.CutClient(t)
		limiter, plain := newLimiter(t, client), newLimiter(t, b.Client)
		limit := ratelimit.Limit{Rate: 7, Period: time.Hour, Burst: 3} // 514,285,714 2/7µs an event
		for _, a := range allowers {
			key := b.Key(t, "rl-test:")
			t.Cleanup(func() { b.Client.Del(ctx, gcraKey(key), "{"+key+"}:x:ratelimit") })
			require.Equal(t, int64(3), remaining(t, plain, key, limit), "%s: the script is loaded", a.name)
			_, err := plain.AllowAll(ctx, []ratelimit.Rule{{Key: "{" + key + "}:x", Limit: limit}})
			require.NoError(t, err, "allow_all.lua is loaded")

			cuts := cutter.Cuts()
			cutter.Arm(1, "evalsha", key)
			res, err := a.allow(ctx, limiter, key, limit, 1)
			require.NoError(t, err, a.name)
			require.Equal(t, cuts+1, cutter.Cuts(), a.name)
			assert.True(t, res.Allowed, "%s: the re-send had room and counted", a.name)
			assert.Equal(t, int64(1), res.Remaining, a.name)
			first := tatRat(t, b, key)

			cutter.Arm(1, "evalsha", key)
			res, err = a.allow(ctx, limiter, key, limit, 1)
			require.NoError(t, err, a.name)
			require.Equal(t, cuts+2, cutter.Cuts(), a.name)
			assert.False(t, res.Allowed, "%s: the re-send found no room: refused early", a.name)
			assert.Positive(t, res.RetryAfter, a.name)
			assert.Zero(t, remaining(t, plain, key, limit), "%s: the first run counted", a.name)
			moved := new(big.Rat).Sub(tatRat(t, b, key), first)
			assert.Equal(t, big.NewRat(time.Hour.Microseconds(), 7).String(), moved.String(), "%s: one share more, exactly", a.name)
		}
	})
}

// AllowAll counts, in one call, rules whose shares are whole µs and rules
// whose shares are not, beside a fixed window, each exactly as AllowN
// would, all or nothing: on miniredis, whose clock stands still.
func TestAllowAllMixesSharesExactly(t *testing.T) {
	ctx := context.Background()
	b := redistest.Miniredis(t)
	limiter := newLimiter(t, b.Client)
	tag := "{" + b.Key(t, "rl-test:") + "}"
	rules := []ratelimit.Rule{
		{Key: tag + ":a", Limit: ratelimit.Limit{Rate: 7, Period: 3 * time.Second, Burst: 2}, N: 2}, // 428,571 3/7µs an event
		{Key: tag + ":b", Limit: ratelimit.Limit{Rate: 5, Period: time.Second, Algorithm: ratelimit.FixedWindow}, N: 2},
		{Key: tag + ":c", Limit: ratelimit.PerSecond(10), N: 2},                                       // 100ms an event
		{Key: tag + ":d", Limit: ratelimit.Limit{Rate: 300_000, Period: time.Second, Burst: 5}, N: 2}, // 3 1/3µs an event
	}
	want := func(allowed bool, remaining int64, retry, reset time.Duration) ratelimit.Result {
		return ratelimit.Result{Allowed: allowed, Remaining: remaining, RetryAfter: retry, ResetAfter: reset}
	}
	check := func(step string, allowed bool, rs ratelimit.Results, want ...ratelimit.Result) {
		t.Helper()
		assert.Equal(t, allowed, rs.Allowed(), step)
		for i := range want {
			rs[i].Limit = ratelimit.Limit{}
			assert.Equal(t, want[i], rs[i], "%s: rule %d", step, i)
		}
	}
	us := time.Microsecond
	rs, err := limiter.AllowAll(ctx, rules)
	require.NoError(t, err)
	check("first", true, rs,
		want(true, 0, 0, 857_143*us), // 857,142 6/7µs
		want(true, 3, 0, time.Second),
		want(true, 8, 0, 200*ms),
		want(true, 3, 0, 7*us)) // 6 2/3µs

	rs, err = limiter.AllowAll(ctx, rules)
	require.NoError(t, err)
	check("again at once", false, rs,
		want(false, 0, 857_143*us, 857_143*us), // nothing counted anywhere
		want(true, 3, 0, time.Second),
		want(true, 8, 0, 200*ms),
		want(true, 3, 0, 7*us))

	b.Advance(857_143 * us)
	rs, err = limiter.AllowAll(ctx, rules)
	require.NoError(t, err)
	check("once rule a's burst has passed", true, rs,
		want(true, 0, 0, 857_143*us),
		want(true, 1, 0, 142*ms), // a window keeps ms
		want(true, 8, 0, 200*ms),
		want(true, 3, 0, 7*us))
}
