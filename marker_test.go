package slotlimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// A refusal for lack of units marks the key full, so that the refusals
// after it are cheap (see scripts/acquire.lua). Every change that frees or
// grants units must end the mark: a stale one would keep refusing.
func TestFullMarkEndsWithEveryChange(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		try := func(l *slotlimit.Limiter, holder string, n int64) bool {
			t.Helper()
			res, err := l.TryAcquireN(ctx, holder, n)
			require.NoError(t, err)
			return res.Acquired
		}
		full := func(l *slotlimit.Limiter) {
			t.Helper()
			require.True(t, try(l, "a", 1))
			require.True(t, try(l, "b", 1))
			require.False(t, try(l, "c", 1), "full")
			require.False(t, try(l, "c", 1), "still full, from the mark")
		}

		// The deadlines are read on the server's clock: a lease's from
		// Holders, the mark's by PEXPIRETIME, and a refusal's EarliestLapse
		// is checked against the clock read before and after it.
		t.Run("set by the grant that fills the key, until the earliest lapse", func(t *testing.T) {
			key := testKey(t, b)
			l := newLimiter(t, b, key, 2, time.Minute)
			marker := "{" + key + "}/full:2"
			require.True(t, try(l, "a", 1))
			b.Advance(time.Second)
			require.True(t, try(l, "b", 1))
			a := holderDeadline(t, l, "a")
			require.True(t, a.Before(holderDeadline(t, l, "b")), "a's lease ends first")
			ms, err := b.Client.PExpireTime(ctx, marker).Result()
			require.NoError(t, err)
			assert.Equal(t, a.UnixMilli(), ms.Milliseconds(), "until a's lease lapses")
			before := b.Now()
			res, err := l.TryAcquire(ctx, "c")
			require.NoError(t, err)
			after := b.Now()
			assert.False(t, res.Acquired)
			assert.Equal(t, int64(2), res.Count)
			assertLapseBetween(t, res.EarliestLapse, a, before, after, "a's lease")
		})
		t.Run("renewal moves the earliest lapse", func(t *testing.T) {
			key := testKey(t, b)
			l := newLimiter(t, b, key, 1, time.Minute)
			require.True(t, try(l, "a", 1))
			marked := holderDeadline(t, l, "a")
			b.Advance(time.Second)
			err := l.Renew(ctx, "a")
			require.NoError(t, err)
			renewed := holderDeadline(t, l, "a")
			require.True(t, renewed.After(marked), "renewed")
			before := b.Now()
			res, err := l.TryAcquire(ctx, "b")
			require.NoError(t, err)
			after := b.Now()
			assert.False(t, res.Acquired)
			assertLapseBetween(t, res.EarliestLapse, renewed, before, after, "a's renewed lease, not the one the mark was set for")
		})
		t.Run("release", func(t *testing.T) {
			l := newLimiter(t, b, testKey(t, b), 2, time.Minute)
			full(l)
			err := l.Release(ctx, "a")
			require.NoError(t, err)
			assert.True(t, try(l, "c", 1))
		})
		t.Run("lapse", func(t *testing.T) {
			l := newLimiter(t, b, testKey(t, b), 2, leaseTTL)
			full(l)
			b.Advance(leaseTTL + leaseTTL/3)
			assert.True(t, try(l, "c", 1))
		})
		t.Run("holder renews through the mark", func(t *testing.T) {
			l := newLimiter(t, b, testKey(t, b), 2, time.Minute)
			full(l)
			assert.True(t, try(l, "a", 1))
			assert.False(t, try(l, "c", 1))
		})
		t.Run("higher limit", func(t *testing.T) {
			key := testKey(t, b)
			full(newLimiter(t, b, key, 2, time.Minute))
			assert.True(t, try(newLimiter(t, b, key, 3, time.Minute), "c", 1))
		})
		t.Run("smaller weight fits", func(t *testing.T) {
			l := newLimiter(t, b, testKey(t, b), 3, time.Minute)
			require.True(t, try(l, "a", 2))
			require.False(t, try(l, "b", 2))
			assert.True(t, try(l, "c", 1))
		})
		t.Run("shrink", func(t *testing.T) {
			l := newLimiter(t, b, testKey(t, b), 2, time.Minute)
			require.True(t, try(l, "a", 2))
			require.False(t, try(l, "b", 1))
			require.True(t, try(l, "a", 1))
			assert.True(t, try(l, "b", 1))
		})
		t.Run("renewal by a shorter TTL keeps the lease", func(t *testing.T) {
			key := testKey(t, b)
			long := newLimiter(t, b, key, 2, time.Minute)
			full(long)
			short := newLimiter(t, b, key, 2, leaseTTL)
			require.True(t, try(short, "a", 1)) // a keeps its minute
			b.Advance(leaseTTL + leaseTTL/3)
			assert.False(t, try(long, "c", 1), "a's lease did not lapse with the shorter TTL")
		})
	})
}

// assertLapseBetween checks that lapse, the time until deadline that a
// call reported, was measured from the server's clock between before and
// after, read around the call (the call's clock is in ms, hence the ms
// below before).
func assertLapseBetween(t *testing.T, lapse time.Duration, deadline, before, after time.Time, msg string) {
	t.Helper()
	assert.LessOrEqual(t, lapse, deadline.Sub(before)+time.Millisecond, "%s: %v until %v, from no earlier than %v", msg, lapse, deadline, before)
	assert.GreaterOrEqual(t, lapse, deadline.Sub(after), "%s: %v until %v, from no later than %v", msg, lapse, deadline, after)
}
