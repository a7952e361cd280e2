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

var bothAlgorithms = []ratelimit.Limit{
	ratelimit.PerSecond(5),
	{Rate: 5, Period: time.Second, Algorithm: ratelimit.FixedWindow},
}

// dataKey is where limit keeps key's data: the key itself for a
// FixedWindow, the name beside it for GCRA.
func dataKey(key string, limit ratelimit.Limit) string {
	if limit.Algorithm == ratelimit.FixedWindow {
		return key
	}
	return gcraKey(key)
}

// Where a limit keeps its data, a value of another Redis type, or a
// string that is no count, fails the call with an error and is left
// exactly as it was, by Allow and by Reset.
func TestWrongTypeLeavesKeyUntouched(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		for _, limit := range bothAlgorithms {
			listKey, textKey := b.Key(t, "rl-test:list:"), b.Key(t, "rl-test:text:")
			list, text := dataKey(listKey, limit), dataKey(textKey, limit)
			t.Cleanup(func() { b.Client.Del(ctx, list, text) })
			require.NoError(t, b.Client.RPush(ctx, list, "x").Err())
			require.NoError(t, b.Client.Set(ctx, text, "abc", 0).Err())

			_, err := limiter.Allow(ctx, listKey, limit)
			require.Error(t, err, "%v", limit)
			assert.Contains(t, err.Error(), "WRONGTYPE", "%v", limit)
			assert.Contains(t, err.Error(), listKey, "the error names the key")
			if limit.Algorithm == ratelimit.FixedWindow {
				err = limiter.Reset(ctx, listKey, limit)
				require.Error(t, err, "%v", limit)
				assert.Contains(t, err.Error(), "WRONGTYPE", "%v", limit)
			}
			assert.Equal(t, []string{"x"}, b.Client.LRange(ctx, list, 0, -1).Val())
			assert.Equal(t, time.Duration(-1), b.Client.PTTL(ctx, list).Val())

			_, err = limiter.Allow(ctx, textKey, limit)
			require.Error(t, err, "%v", limit)
			assert.Contains(t, err.Error(), `ratelimit: allow "`+textKey+`": ERR the key holds a string that is not a`)
			if limit.Algorithm == ratelimit.FixedWindow {
				err = limiter.Reset(ctx, textKey, limit)
				require.Error(t, err, "%v", limit)
				assert.Contains(t, err.Error(), `ratelimit: reset "`+textKey+`": ERR the key holds a string that is not a count`)
			}
			assert.Equal(t, "abc", b.Client.Get(ctx, text).Val())
			assert.Equal(t, time.Duration(-1), b.Client.PTTL(ctx, text).Val())
		}
	})
}
