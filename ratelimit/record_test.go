package ratelimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/record"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// sent counts the commands a client sends.
type sent struct{ n atomic.Int64 }

func (c *sent) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *sent) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}
func (c *sent) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// A Limiter records the limit it uses beside each key, inside the call's
// own script call (no command more), at most once a minute per key, with
// an expiry a minute past the longest its data lives; Limit reads it.
func TestRateRecordWrittenOncePerMinute(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client := b.NewClient(t)
		require.NoError(t, ratelimit.LoadScripts(ctx, client))
		commands := &sent{}
		client.AddHook(commands)
		limiter := newLimiter(t, client)
		for _, step := range []struct {
			limit  ratelimit.Limit
			fields string
			data   time.Duration // the longest its data lives
		}{
			{ratelimit.Limit{Rate: 10, Period: time.Minute, Burst: 4}, "algorithm=gcra&burst=4&period=60000&rate=10", 24 * time.Second},
			{ratelimit.Limit{Rate: 7, Period: time.Hour, Algorithm: ratelimit.FixedWindow}, "algorithm=fixed-window&burst=7&period=3600000&rate=7", time.Hour},
		} {
			key := b.Key(t, "rl-test:record:")
			name := ratelimit.RecordKey(key)
			before := commands.n.Load()
			_, err := limiter.Allow(ctx, key, step.limit)
			require.NoError(t, err)
			if _, cluster := client.(*redis.ClusterClient); !cluster {
				assert.Equal(t, before+1, commands.n.Load(), "%v: one script call, the record's SET inside it", step.limit)
			}
			got, err := b.Client.Get(ctx, name).Result()
			require.NoError(t, err)
			assert.Equal(t, step.fields, got)
			ttl := b.Client.PTTL(ctx, name).Val()
			assert.True(t, ttl > step.data && ttl <= record.Every+step.data, "%v: PTTL %v, a minute past %v", step.limit, ttl, step.data)
			limit, err := limiter.Limit(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, step.limit, limit)

			// Within the minute, no call writes it again.
			require.NoError(t, b.Client.Set(ctx, name, "algorithm=gcra&rate=1&period=1000&burst=1", time.Minute).Err())
			for range 3 {
				_, err = limiter.AllowN(ctx, key, step.limit, 0)
				require.NoError(t, err)
			}
			limit, err = limiter.Limit(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, ratelimit.PerSecond(1).Rate, limit.Rate, "not written again within the minute")

			ratelimit.RecordDueNow(limiter, key)
			_, err = limiter.Allow(ctx, key, step.limit)
			require.NoError(t, err)
			limit, err = limiter.Limit(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, step.limit, limit, "written again once due")
		}

		limit, err := limiter.Limit(ctx, b.Key(t, "rl-test:none:"))
		require.NoError(t, err)
		assert.Zero(t, limit, "no record: the zero Limit")
		_, err = limiter.Limit(ctx, "")
		assert.ErrorIs(t, err, ratelimit.ErrInvalidKey)
		bad := b.Key(t, "rl-test:bad:")
		require.NoError(t, b.Client.Set(ctx, ratelimit.RecordKey(bad), "rate=x", time.Minute).Err())
		_, err = limiter.Limit(ctx, bad)
		assert.Error(t, err, "a record no Limiter wrote")
	})
}

// Coalesced calls write the record in their batch's script call, and
// AllowAll writes each rule's.
func TestRateRecordByBatchAndAllowAll(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		limit := ratelimit.Limit{Rate: 1000, Period: time.Hour, Burst: 1000}
		key := b.Key(t, "rl-test:batch:")
		var wg sync.WaitGroup
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := limiter.Allow(ctx, key, limit)
				assert.NoError(t, err)
			}()
		}
		wg.Wait()
		got, err := limiter.Limit(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, limit, got)
		res, err := limiter.Inspect(ctx, key, limit)
		require.NoError(t, err)
		assert.Equal(t, int64(950), res.Remaining, "every call counted once")

		tag := "{" + b.Key(t, "rl-test:all:") + "}"
		window := ratelimit.Limit{Rate: 3, Period: time.Minute, Algorithm: ratelimit.FixedWindow}
		_, err = limiter.AllowAll(ctx, []ratelimit.Rule{{Key: tag + ":a", Limit: limit}, {Key: tag + ":b", Limit: window}})
		require.NoError(t, err)
		for key, want := range map[string]ratelimit.Limit{tag + ":a": limit, tag + ":b": window} {
			got, err := limiter.Limit(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, want, got, key)
		}
	})
}

// Inspect reports what AllowN of 0 events does, and writes nothing: not
// the record, and not the expiry of a count left without one.
func TestInspectWritesNothing(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		for _, limit := range bothAlgorithms {
			key := b.Key(t, "rl-test:inspect:")
			_, err := limiter.AllowN(ctx, key, limit, 2)
			require.NoError(t, err)
			require.NoError(t, b.Client.Del(ctx, ratelimit.RecordKey(key)).Err())
			ratelimit.RecordDueNow(limiter, key)
			got, err := limiter.Inspect(ctx, key, limit)
			require.NoError(t, err)
			want, err := limiter.AllowN(ctx, key, limit, 0)
			require.NoError(t, err)
			assert.Equal(t, want.Remaining, got.Remaining, "%v", limit)
			assert.Equal(t, want.Allowed, got.Allowed)
			assert.InDelta(t, want.ResetAfter, got.ResetAfter, float64(time.Second))
			require.NoError(t, b.Client.Del(ctx, ratelimit.RecordKey(key)).Err())
			_, err = limiter.Inspect(ctx, key, limit)
			require.NoError(t, err)
			assert.Zero(t, b.Client.Exists(ctx, ratelimit.RecordKey(key)).Val(), "no record written")
		}
		window := bothAlgorithms[1]
		key := b.Key(t, "rl-test:inspect:")
		require.NoError(t, b.Client.Set(ctx, key, "9", 0).Err())
		res, err := limiter.Inspect(ctx, key, window)
		require.NoError(t, err)
		assert.False(t, res.Allowed, "over its limit")
		assert.Equal(t, time.Duration(-1), b.Client.PTTL(ctx, key).Val(), "a count without expiry keeps none")
		require.NoError(t, b.Client.RPush(ctx, key+"l", "x").Err())
		_, err = limiter.Inspect(ctx, key+"l", window)
		assert.ErrorContains(t, err, "WRONGTYPE")
	})
}
