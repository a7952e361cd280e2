package main_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// rate show prints the events a limit allows now on a key, and counts
// nothing; rate reset gives the key its full allowance again. Both need
// the limit, which Redis does not keep. A key with no event allowed now
// is the answer no. The limits are per hour, so that nothing comes back
// while the test runs on a real server's moving clock.
func TestRateShowAndReset(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		rl, err := ratelimit.New(b.Client, ratelimit.Config{})
		require.NoError(t, err)
		for _, step := range []struct {
			name  string
			limit ratelimit.Limit
			flags []string
		}{
			{"gcra", ratelimit.Limit{Rate: 10, Period: time.Hour}, []string{"-rate", "10", "-period", "1h"}},
			{"fixed window", ratelimit.Limit{Rate: 10, Period: time.Hour, Algorithm: ratelimit.FixedWindow},
				[]string{"-rate", "10", "-period", "1h", "-algorithm", "fixed-window"}},
		} {
			key := testKey(t, "cli-test:rate:")
			res, err := rl.AllowN(ctx, key, step.limit, 3)
			require.NoError(t, err)
			require.True(t, res.Allowed)
			show := func(extra ...string) run {
				return cli(t, "", nil, append(append([]string{"-u", url, "rate", "show", key}, step.flags...), extra...)...)
			}

			r := show("-json")
			require.Equal(t, 0, r.code, step.name)
			got := jsonInts(t, r.stdout, "remaining", "rate", "period_ms", "burst", "reset_after_ms")
			assert.Equal(t, int64(7), got["remaining"], step.name)
			assert.Equal(t, int64(10), got["rate"])
			assert.Equal(t, int64(3_600_000), got["period_ms"])
			assert.Equal(t, int64(10), got["burst"])
			assert.Greater(t, got["reset_after_ms"], int64(0))
			assert.Contains(t, r.stdout, `"over_limit": false`)

			r = cli(t, "", nil, "-u", url, "rate", "show", "-json", key)
			require.Equal(t, 0, r.code, "no flags: the limit recorded beside the key")
			assert.Equal(t, map[string]int64{"remaining": 7, "rate": 10, "period_ms": 3_600_000, "burst": 10},
				jsonInts(t, r.stdout, "remaining", "rate", "period_ms", "burst"))

			r = show()
			require.Equal(t, 0, r.code)
			assert.Regexp(t, `(?m)^RATE +`+key+`$`, r.stdout)
			assert.Regexp(t, `(?m)^limit +`+regexp.QuoteMeta(step.limit.String())+`$`, r.stdout)
			assert.Regexp(t, `(?m)^allowed now +7 events$`, r.stdout)
			assert.Regexp(t, `(?m)^full again +in \d`, r.stdout)

			res, err = rl.AllowN(ctx, key, step.limit, 7)
			require.NoError(t, err)
			require.True(t, res.Allowed, "show counted nothing: 7 are left")
			r = show()
			assert.Equal(t, 1, r.code, "no event allowed now")
			assert.Regexp(t, `(?m)^allowed now +0 events$`, r.stdout)

			r = cli(t, "", nil, append([]string{"-u", url, "rate", "reset", "-json", key}, step.flags...)...)
			require.Equal(t, 0, r.code)
			got = jsonInts(t, r.stdout, "remaining", "remaining_before")
			assert.Equal(t, map[string]int64{"remaining": 10, "remaining_before": 0}, got)
			res, err = rl.AllowN(ctx, key, step.limit, 10)
			require.NoError(t, err)
			assert.True(t, res.Allowed, "the full allowance, after the reset")
			r = cli(t, "", nil, "-u", url, "rate", "reset", key)
			require.Equal(t, 0, r.code, "no flags: the limit recorded beside the key")
			assert.Equal(t, "reset "+key+", "+step.limit.String()+": 0 events allowed before, 10 now\n", r.stdout)
		}

		// A limit the package refuses: usage.
		for _, args := range [][]string{
			{"rate", "show", "-rate", "10", "-algorithm", "leaky", "k"},
			{"rate", "show", "-rate", "10", "-period", "1500us", "k"},
		} {
			r := cli(t, "", nil, append([]string{"-u", url}, args...)...)
			assert.Equal(t, 2, r.code, "%q", args)
			assert.Empty(t, r.stdout)
		}
	})
}

// Without flags, rate show and rate reset read the limit that a Limiter
// recorded beside the key. A key with neither a record nor data is no
// rate limit; one with data but no record needs the limit given; a key
// of another type is explained in words. rate show writes nothing, so a
// read-only Redis user can run it.
func TestRateWithoutFlags(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		for _, cmd := range []string{"show", "reset"} {
			key := testKey(t, "cli-test:rate:")
			r := cli(t, "", nil, "-u", url, "rate", cmd, key)
			assert.Equal(t, 1, r.code, cmd)
			assert.Equal(t, "no rate limit at "+key+"\n", r.stderr, cmd)
			assert.Empty(t, r.stdout)

			require.NoError(t, b.Client.Set(ctx, key, "3", time.Minute).Err()) // a classic INCR count
			r = cli(t, "", nil, "-u", url, "rate", cmd, key)
			assert.Equal(t, 2, r.code, cmd)
			assert.Contains(t, r.stderr, "holds data but no rate record", cmd)
			assert.Contains(t, r.stderr, "-rate N", cmd)
		}

		key := testKey(t, "cli-test:rate:")
		rl, err := ratelimit.New(b.Client, ratelimit.Config{})
		require.NoError(t, err)
		window := ratelimit.Limit{Rate: 5, Period: time.Hour, Algorithm: ratelimit.FixedWindow}
		_, err = rl.Allow(ctx, key, window)
		require.NoError(t, err)
		require.NoError(t, b.Client.Del(ctx, key).Err())
		require.NoError(t, b.Client.RPush(ctx, key, "x").Err())
		r := cli(t, "", nil, "-u", url, "rate", "show", key)
		assert.Equal(t, 1, r.code)
		assert.Equal(t, key+" holds a Redis list, not a rate limit (another package's, or a value of yours)\n", r.stderr)

		// A count without an expiry: rate show reads it and leaves it so.
		key = testKey(t, "cli-test:rate:")
		_, err = rl.Allow(ctx, key, window)
		require.NoError(t, err)
		require.NoError(t, b.Client.Persist(ctx, key).Err())
		r = cli(t, "", nil, "-u", url, "rate", "show", key)
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Regexp(t, `(?m)^allowed now +4 events$`, r.stdout)
		assert.Equal(t, time.Duration(-1), b.Client.PTTL(ctx, key).Val(), "rate show wrote nothing")
	})
}
