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
			r = cli(t, "", nil, append([]string{"-u", url, "rate", "reset", key}, step.flags...)...)
			require.Equal(t, 0, r.code)
			assert.Equal(t, "reset "+key+", "+step.limit.String()+": 0 events allowed before, 10 now\n", r.stdout)
		}

		// No limit, or one the package refuses: usage.
		for _, args := range [][]string{
			{"rate", "show", "k"},
			{"rate", "reset", "k"},
			{"rate", "show", "-rate", "10", "-algorithm", "leaky", "k"},
			{"rate", "show", "-rate", "10", "-period", "1500us", "k"},
		} {
			r := cli(t, "", nil, append([]string{"-u", url}, args...)...)
			assert.Equal(t, 2, r.code, "%q", args)
			assert.Empty(t, r.stdout)
		}
	})
}
