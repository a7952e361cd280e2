package slotlimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// sideSuffixes are the suffixes of the keys a Limiter keeps beside its
// lease set: weights, full marker (for limit 60), queue, queue deadlines
// and queue wants.
var sideSuffixes = []string{"w", "full:60", "q", "qd", "qw"}

// No key beside a Limiter's lease set can be another Limiter's key: New
// refuses every such name, tagged or not, so that one Limiter's release
// never reads another's leases as its queue or weights.
func TestSideKeysAreNeverAnotherLimitersKey(t *testing.T) {
	b := newMiniredis(t)
	for _, suffix := range sideSuffixes {
		for _, side := range []string{
			"{a}/" + suffix,      // beside the untagged key "a"
			"{t}:x:" + suffix,    // beside the tagged key "{t}:x"
			"{t}/x:" + suffix,    // beside the tagged key "{t}/x"
			"{a}/q:" + suffix,    // beside "{a}/q", itself refused
			"{ar:1}/" + suffix,   // beside "ar:1"
			"p{t}q:" + suffix,    // beside "p{t}q"
			"{t}:x:qd:" + suffix, // beside "{t}:x:qd", itself refused
		} {
			_, err := slotlimit.New(b.Client, slotlimit.Config{Key: side, Limit: 60})
			assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "key %q", side)
		}
	}
	for _, ok := range []string{"a", "{a}", "{a}/x", "{t}:x", "{t}:x:wait", "{t}:queue", "ar:w", "ar:q", "{t}:full", "{t}:full:x", "{t}:x:free"} {
		_, err := slotlimit.New(b.Client, slotlimit.Config{Key: ok, Limit: 60})
		assert.NoError(t, err, "key %q", ok)
	}
}

// The issue this guards against: a Limiter on "{a}/q", were it allowed,
// keeps its leases where the Limiter on "a" keeps its queue, and a
// release on "a" would delete them.
func TestLimiterOnAnotherLimitersQueueIsRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		_, err := slotlimit.New(b.Client, slotlimit.Config{Key: "{" + key + "}/q", Limit: 2})
		require.ErrorIs(t, err, slotlimit.ErrInvalidConfig)

		// Two legal keys whose names are alike keep apart.
		a := newLimiter(t, b, key, 2, time.Minute)
		other := newLimiter(t, b, "{"+key+"}/x", 2, time.Minute)
		t.Cleanup(func() { b.Client.Del(ctx, "{"+key+"}/x") })
		for _, h := range []string{"o1", "o2"} {
			res, err := other.TryAcquire(ctx, h)
			require.NoError(t, err)
			require.True(t, res.Acquired)
		}
		res, err := a.TryAcquire(ctx, "a1")
		require.NoError(t, err)
		require.True(t, res.Acquired)
		err = a.Release(ctx, "a1")
		require.NoError(t, err)
		n, err := other.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), n)
	})
}
