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

// A key of another Redis type, or a string that is no count, fails with an
// error and is left exactly as it was.
func TestWrongTypeLeavesKeyUntouched(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := ratelimit.New(b.Client)
		for _, limit := range bothAlgorithms {
			list, text := b.Key(t, "rl-test:list:"), b.Key(t, "rl-test:text:")
			require.NoError(t, b.Client.RPush(ctx, list, "x").Err())
			require.NoError(t, b.Client.Set(ctx, text, "abc", 0).Err())

			_, err := limiter.Allow(ctx, list, limit)
			require.Error(t, err, "%v", limit)
			assert.Contains(t, err.Error(), "WRONGTYPE", "%v", limit)
			assert.Contains(t, err.Error(), list, "the error names the key")
			assert.Equal(t, []string{"x"}, b.Client.LRange(ctx, list, 0, -1).Val())
			assert.Equal(t, time.Duration(-1), b.Client.PTTL(ctx, list).Val())

			_, err = limiter.Allow(ctx, text, limit)
			require.Error(t, err, "%v", limit)
			assert.Contains(t, err.Error(), `ratelimit: allow "`+text+`": ERR the key holds a string that is not a`)
			assert.Equal(t, "abc", b.Client.Get(ctx, text).Val())
			assert.Equal(t, time.Duration(-1), b.Client.PTTL(ctx, text).Val())
		}
	})
}
