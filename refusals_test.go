package slotlimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// With CountRefusals, every call refused without waiting is counted once,
// whichever script refused it (the full marker, the general path, a batch,
// fair mode), and an Acquire that waits is not; without it, nothing is
// counted. Refusals reads the count from any Limiter on the key.
func TestCountRefusals(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		key := testKey(t, b)
		counted, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute, CountRefusals: true})
		require.NoError(t, err)
		fair, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute, CountRefusals: true, Fair: true})
		require.NoError(t, err)
		silent, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute})
		require.NoError(t, err)
		refusals := func() int64 {
			n, err := silent.Refusals(ctx)
			require.NoError(t, err)
			return n
		}
		assert.Zero(t, refusals())

		for _, h := range []string{"a", "b"} {
			_, err := counted.TryAcquire(ctx, h)
			require.NoError(t, err)
		}
		assert.Zero(t, refusals(), "grants are not counted")

		res, err := counted.TryAcquire(ctx, "c") // refused by the full marker
		require.NoError(t, err)
		require.False(t, res.Acquired)
		assert.Equal(t, int64(1), refusals())

		res, err = counted.TryAcquireN(ctx, "d", 2) // the general path
		require.NoError(t, err)
		require.False(t, res.Acquired)
		assert.Equal(t, int64(2), refusals())

		results, err := counted.TryAcquireBatch(ctx, []string{"e", "f", "a"})
		require.NoError(t, err)
		require.Len(t, results, 3)
		assert.Equal(t, int64(4), refusals(), "e and f refused; a renewed")

		res, err = fair.TryAcquire(ctx, "g")
		require.NoError(t, err)
		require.False(t, res.Acquired)
		assert.Equal(t, int64(5), refusals(), "fair mode's script counts too")

		res, err = silent.TryAcquire(ctx, "h")
		require.NoError(t, err)
		require.False(t, res.Acquired)
		assert.Equal(t, int64(5), refusals(), "a Limiter without CountRefusals counts nothing")

		go func() {
			time.Sleep(100 * time.Millisecond)
			counted.Release(ctx, "a") //nolint:errcheck // the Acquire below checks it
		}()
		_, err = counted.Acquire(ctx, "w")
		require.NoError(t, err)
		assert.Equal(t, int64(5), refusals(), "an Acquire that waits is not refused")

		if !b.Real {
			return
		}
		ttl, err := b.Client.PTTL(ctx, "{"+key+"}/refused").Result()
		require.NoError(t, err)
		assert.InDelta(t, float64(24*time.Hour), float64(ttl), float64(time.Minute), "the count lapses a day after it began")
	})
}
