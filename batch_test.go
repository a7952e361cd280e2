package slotlimit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// A batch gives exactly what the same calls one by one give, in order:
// two keys in the same state, one served by batches, the other by single
// calls. The script takes a path of its own for the commonest calls, and
// the cases below take each of the others.
func TestBatchMatchesCallsOneByOne(t *testing.T) {
	many := make([]string, 2*batchLimit)
	for i := range many {
		many[i] = fmt.Sprintf("m%d", i%(batchLimit+batchLimit/2)) // some twice
	}
	cases := []struct {
		name    string
		limit   int64
		fair    bool
		setup   func(l *slotlimit.Limiter) error // the same on both keys
		holders []string
	}{
		{name: "plain", limit: 5, holders: []string{"d1", "d2", "early", "d2", "d3", "d4", "d5", "d6"}},
		{name: "a weighted holder", limit: 5, holders: []string{"d1", "d2", "early", "d2", "d3", "d4", "d5"},
			setup: func(l *slotlimit.Limiter) error {
				_, err := l.TryAcquireN(context.Background(), "early", 2)
				return err
			}},
		{name: "fair", limit: 5, fair: true, holders: []string{"d1", "d2", "early", "d2", "d3", "d4", "d5", "d6"}},
		{name: "more holders than one script call takes", limit: batchLimit, holders: many},
	}
	eachBackend(t, func(t *testing.T, b *backend) {
		// A script call of a thousand holders runs for a while on miniredis,
		// whose Lua shares the test's starved CPU on a busy machine: a reply
		// is waited for as long as a gross failure takes, not go-redis's 3s.
		client := newClient(t, b, func(o *redis.UniversalOptions) { o.ReadTimeout = time.Minute })
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				limiter := func() *slotlimit.Limiter {
					l, err := slotlimit.New(client, slotlimit.Config{Key: testKey(t, b), Limit: tc.limit, TTL: time.Minute, Fair: tc.fair})
					require.NoError(t, err)
					_, err = l.TryAcquire(ctx, "early")
					require.NoError(t, err)
					if tc.setup != nil {
						require.NoError(t, tc.setup(l))
					}
					return l
				}
				batched, single := limiter(), limiter()
				got, err := batched.TryAcquireBatch(ctx, tc.holders)
				require.NoError(t, err)
				require.Len(t, got, len(tc.holders))
				for i, h := range tc.holders {
					want, err := single.TryAcquire(ctx, h)
					require.NoError(t, err)
					assert.Equal(t, want.Acquired, got[i].Acquired, "%d %s", i, h)
					assert.Equal(t, want.Count, got[i].Count, "%d %s", i, h)
					assert.Equal(t, want.Weight, got[i].Weight, "%d %s", i, h)
					assert.Equal(t, want.EarliestLapse > 0, got[i].EarliestLapse > 0, "%d %s", i, h)
					assert.Equal(t, want.ExpiresAt.IsZero(), got[i].ExpiresAt.IsZero(), "%d %s", i, h)
				}
				assert.ElementsMatch(t, holderIDs(t, single), holderIDs(t, batched))

				releases := append([]string{"d1", "d1", "nobody", "early"}, tc.holders...)
				freed, err := batched.ReleaseBatch(ctx, releases)
				require.NoError(t, err)
				require.Len(t, freed, len(releases))
				for i, h := range releases {
					err := single.Release(ctx, h)
					if freed[i] {
						require.NoError(t, err, "%d %s", i, h)
					} else {
						require.ErrorIs(t, err, slotlimit.ErrNotHeld, "%d %s", i, h)
					}
				}
				assert.ElementsMatch(t, holderIDs(t, single), holderIDs(t, batched))
			})
		}
	})
}

// batchLimit is a limit above the most holders one script call of a batch
// takes (1,000).
const batchLimit = 1200

// A release in a batch hands the units it frees to a waiter as a single
// Release does.
func TestReleaseBatchHandsOffToWaiters(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		l := newLimiter(t, b, key, 1, time.Minute)
		res, err := l.TryAcquire(ctx, "a")
		require.NoError(t, err)
		require.True(t, res.Acquired)
		waited := make(chan error, 1)
		go func() {
			res, err := l.Acquire(ctx, "w")
			if err == nil && !res.Acquired {
				err = fmt.Errorf("not acquired: %+v", res)
			}
			waited <- err
		}()
		require.Eventually(t, func() bool {
			n, err := b.Client.Exists(ctx, "{"+key+"}/q").Result()
			return err == nil && n == 1
		}, 5*time.Second, 5*time.Millisecond, "the waiter queues")
		freed, err := l.ReleaseBatch(ctx, []string{"nobody", "a", "a"})
		require.NoError(t, err)
		assert.Equal(t, []bool{false, true, false}, freed)
		select {
		case err := <-waited:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("the waiter was not handed the unit")
		}
		assert.Equal(t, []string{"w"}, holderIDs(t, l))
	})
}

// A refused holder of a batch is told when the earliest lease lapses, as
// it stands at its turn: a holder renewed earlier in the same batch no
// longer holds the earliest lease. The times are read on the server's
// clock, in ms: the leases' deadlines before the batch, and the batch's
// own clock from the renewal's deadline, a full TTL after it; the TTL is
// long, so that no lease lapses before the batch on a busy machine.
func TestBatchEarliestLapseFollowsRenewals(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		const ttl = 20 * time.Second
		step := 400 * time.Millisecond
		l := newLimiter(t, b, testKey(t, b), 2, ttl)
		for _, h := range []string{"a", "b"} {
			res, err := l.TryAcquire(ctx, h)
			require.NoError(t, err)
			require.True(t, res.Acquired)
			b.Advance(step)
		}
		hs, err := l.Holders(ctx)
		require.NoError(t, err)
		deadline := map[string]time.Time{}
		for _, h := range hs {
			deadline[h.ID] = h.ExpiresAt
		}
		require.True(t, deadline["a"].Before(deadline["b"]), "a's lease ends first: %v", hs)

		got, err := l.TryAcquireBatch(ctx, []string{"c", "a", "d"})
		require.NoError(t, err)
		require.False(t, got[0].Acquired)
		require.True(t, got[1].Acquired, "a renews")
		require.False(t, got[2].Acquired)
		now := got[1].ExpiresAt.Add(-ttl) // the batch's clock
		assert.False(t, now.Before(deadline["b"].Add(-ttl)), "the batch ran after b's grant")
		assert.Equal(t, deadline["a"].Sub(now), got[0].EarliestLapse, "a's lease is the earliest")
		assert.Equal(t, deadline["b"].Sub(now), got[2].EarliestLapse, "b's lease is now the earliest")
	})
}

func TestBatchRejectsInvalidHolderAndTouchesNothing(t *testing.T) {
	b := newMiniredis(t)
	ctx := context.Background()
	key := testKey(t, b)
	l := newLimiter(t, b, key, 5, time.Minute)
	_, err := l.TryAcquireBatch(ctx, []string{"d1", "", "d2"})
	assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder)
	_, err = l.ReleaseBatch(ctx, []string{"d1", string(make([]byte, slotlimit.MaxHolderLen+1))})
	assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder)
	assert.Empty(t, storedKeys(t, b, key, 5))
	res, err := l.TryAcquireBatch(ctx, nil)
	assert.NoError(t, err)
	assert.Empty(t, res)
}

// A batch survives a flushed script cache, and a SCRIPT FLUSH between two
// batches runs no call twice.
func TestBatchAfterScriptFlush(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		l := newLimiter(t, b, testKey(t, b), 50, time.Minute)
		holders := make([]string, 40)
		for i := range holders {
			holders[i] = fmt.Sprintf("d%d", i)
		}
		require.NoError(t, b.Client.ScriptFlush(ctx).Err())
		got, err := l.TryAcquireBatch(ctx, holders)
		require.NoError(t, err)
		for i, res := range got {
			assert.True(t, res.Acquired)
			assert.Equal(t, int64(i+1), res.Count, "each call ran once, in order")
		}
		require.NoError(t, b.Client.ScriptFlush(ctx).Err())
		freed, err := l.ReleaseBatch(ctx, holders)
		require.NoError(t, err)
		for i, ok := range freed {
			assert.True(t, ok, "release %d ran once and freed a live lease", i)
		}
	})
}

// flushBeforePipelines is a go-redis hook that flushes the server's script
// cache, with flush, before every pipeline the client sends, as a SCRIPT
// FLUSH run in a tight loop by someone else would at the worst moments.
type flushBeforePipelines func(ctx context.Context) error

func (f flushBeforePipelines) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f flushBeforePipelines) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (f flushBeforePipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := f(ctx); err != nil {
			return err
		}
		return next(ctx, cmds)
	}
}

// A batch goes through however often the script cache is flushed: every
// pipeline, the first and the one that follows a NOSCRIPT reply, meets an
// empty cache, and still no call fails and none runs twice.
func TestBatchSurvivesScriptFlushBeforeEveryPipeline(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		client := newClient(t, b)
		flush := flushBeforePipelines(func(ctx context.Context) error {
			if cluster, ok := b.Client.(*redis.ClusterClient); ok {
				return cluster.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
					return c.ScriptFlush(ctx).Err()
				})
			}
			return b.Client.ScriptFlush(ctx).Err()
		})
		if cluster, ok := client.(*redis.ClusterClient); ok {
			// A batch goes to its key's master as a pipeline of that node.
			cluster.OnNewNode(func(node *redis.Client) { node.AddHook(flush) })
		} else {
			client.AddHook(flush)
		}
		l := newLimiterOn(t, client, slotlimit.Config{Key: testKey(t, b), Limit: 50, TTL: time.Minute})
		holders := make([]string, 40)
		for i := range holders {
			holders[i] = fmt.Sprintf("d%d", i)
		}
		for round := range 3 {
			got, err := l.TryAcquireBatch(ctx, holders)
			require.NoError(t, err, "round %d", round)
			for i, res := range got {
				assert.True(t, res.Acquired)
				assert.Equal(t, int64(i+1), res.Count, "round %d: each call ran once, in order", round)
			}
			freed, err := l.ReleaseBatch(ctx, holders)
			require.NoError(t, err, "round %d", round)
			for i, ok := range freed {
				assert.True(t, ok, "round %d: release %d ran once and freed a live lease", round, i)
			}
		}
	})
}
