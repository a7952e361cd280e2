package adaptive_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// boundsKey is the name of the record of the bounds of the limit at key.
func boundsKey(key string) string {
	if strings.Contains(key, "{") {
		return key + ":adaptive:bounds"
	}
	return "{" + key + "}/adaptive:bounds"
}

// A Limiter's first try for a slot records its Min and Max beside the
// limit, with one SET, and the tries of the next minute send none;
// Recorded reads them from any Limiter of the Key. The record outlives
// the limit's state by a minute.
func TestTryRecordsBounds(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client := b.NewClient(t)
		count := &redistest.CommandCounter{}
		client.AddHook(count)
		key := b.Key(t, "adaptive-test:")
		t.Cleanup(func() {
			keys, _ := adaptive.Keys(key)
			b.Client.Del(context.Background(), append(keys, boundsKey(key))...)
		})
		l := newLimiterOn(t, client, adaptive.Config{Key: key, Min: 2, Max: 30, TTL: time.Minute})
		reader := newLimiterOn(t, b.Client, adaptive.Config{Key: key, Max: 1})
		_, _, known, err := reader.Recorded(ctx)
		require.NoError(t, err)
		assert.False(t, known, "nothing recorded before a try")

		s, err := l.TryAcquire(ctx)
		require.NoError(t, err)
		raw, err := b.Client.Get(ctx, boundsKey(key)).Result()
		require.NoError(t, err)
		fields, err := url.ParseQuery(raw)
		require.NoError(t, err)
		assert.Equal(t, url.Values{"min": {"2"}, "max": {"30"}}, fields)
		ttl := b.Client.PTTL(ctx, boundsKey(key)).Val()
		assert.Greater(t, ttl, adaptive.StateTTL+time.Minute)
		assert.LessOrEqual(t, ttl, adaptive.StateTTL+2*time.Minute)
		require.NoError(t, s.Success(ctx))

		before := count.Commands()
		for range 3 {
			s, err := l.TryAcquire(ctx)
			require.NoError(t, err)
			require.NoError(t, s.Success(ctx))
		}
		assert.Equal(t, before+6, count.Commands(), "a script call per try and per release, no SET")

		lo, hi, known, err := reader.Recorded(ctx)
		require.NoError(t, err)
		assert.True(t, known)
		assert.Equal(t, [2]int64{2, 30}, [2]int64{lo, hi})

		require.NoError(t, b.Client.Set(ctx, boundsKey(key), "min=5&max=4", time.Minute).Err())
		_, _, known, err = reader.Recorded(ctx)
		require.NoError(t, err)
		assert.False(t, known, "bounds no Limiter could have are none")
		var nilLimiter *adaptive.Limiter
		_, _, _, err = nilLimiter.Recorded(ctx)
		assert.ErrorIs(t, err, adaptive.ErrInvalidConfig)
	})
}
