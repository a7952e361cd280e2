package slotlimit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/record"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// recordSets is a go-redis hook that counts the SETs of settings records
// (keys ending in "/limit") a client sends, and fails them while failing
// is set.
type recordSets struct {
	mu      sync.Mutex
	sent    int
	failing bool
}

func (h *recordSets) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sent
}

func (h *recordSets) fail(on bool) {
	h.mu.Lock()
	h.failing = on
	h.mu.Unlock()
}

func (h *recordSets) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *recordSets) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if cmd.Name() == "set" && len(args) > 1 {
			if key, _ := args[1].(string); strings.HasSuffix(key, "/limit") {
				h.mu.Lock()
				h.sent++
				failing := h.failing
				h.mu.Unlock()
				if failing {
					err := errors.New("record write refused by the test")
					cmd.SetErr(err)
					return err
				}
			}
		}
		return next(ctx, cmd)
	}
}

func (h *recordSets) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// recordClient returns another client of b's server that counts the SETs
// of settings records it sends.
func recordClient(t *testing.T, b *backend) (redis.UniversalClient, *recordSets) {
	client := newClient(t, b)
	h := &recordSets{}
	client.AddHook(h)
	return client, h
}

// A Limiter writes its record, "{KEY}/limit" holding its limit and lease
// time, with one SET before its first call that takes or renews, and not
// again within a minute whatever it is called for; reads and releases
// write none. A second Limiter on the key writes its own. The record
// expires a minute after the longest its data can outlive the call: the
// lease time and a queue entry's life.
func TestRecordWrittenOncePerHandle(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		client, sets := recordClient(t, b)
		l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute})
		require.NoError(t, err)

		_, err = l.Count(ctx)
		require.NoError(t, err)
		_, err = l.Inspect(ctx)
		require.NoError(t, err)
		assert.ErrorIs(t, l.Release(ctx, "nobody"), slotlimit.ErrNotHeld)
		assert.Zero(t, sets.count(), "reads and releases write no record")

		for range 3 {
			_, err = l.TryAcquire(ctx, "a")
			require.NoError(t, err)
		}
		require.NoError(t, l.Renew(ctx, "a"))
		_, err = l.TryAcquireBatch(ctx, []string{"b"})
		require.NoError(t, err)
		require.NoError(t, l.Release(ctx, "b"))
		_, err = l.Acquire(ctx, "c")
		require.NoError(t, err)
		assert.Equal(t, 1, sets.count(), "one SET for every call within a minute")

		value, err := b.Client.Get(ctx, "{"+key+"}/limit").Result()
		require.NoError(t, err)
		assert.Equal(t, "lease=60000&limit=2", value)
		outlive := time.Minute + waitqueue.EntryTTL
		ttl, err := b.Client.PTTL(ctx, "{"+key+"}/limit").Result()
		require.NoError(t, err)
		if b.Real {
			assert.True(t, ttl > outlive && ttl <= record.TTL(outlive), "record TTL %v, want at most %v", ttl, record.TTL(outlive))
		} else {
			assert.Equal(t, record.TTL(outlive), ttl)
		}

		other, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: 5, TTL: time.Second})
		require.NoError(t, err)
		_, err = other.TryAcquire(ctx, "d")
		require.NoError(t, err)
		assert.Equal(t, 2, sets.count(), "another handle writes its own record")
		cfg, ok, err := slotlimit.Recorded(ctx, b.Client, key)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, slotlimit.Config{Key: key, Limit: 5, TTL: time.Second}, cfg, "the last writer's")
	})
}

// The record lapses with the data it describes: it outlives the last
// lease, and is gone a minute after it.
func TestRecordLapsesWithData(t *testing.T) {
	b := newMiniredis(t)
	ctx := context.Background()
	key := testKey(t, b)
	l := newLimiter(t, b, key, 3, 10*time.Second)
	_, err := l.TryAcquire(ctx, "a")
	require.NoError(t, err)

	b.Advance(10*time.Second + waitqueue.EntryTTL)
	n, err := b.Client.Exists(ctx, key).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the lease set lapsed with its lease")
	_, ok, err := slotlimit.Recorded(ctx, b.Client, key)
	require.NoError(t, err)
	assert.True(t, ok, "the record outlives the data")

	b.Advance(record.Every)
	_, ok, err = slotlimit.Recorded(ctx, b.Client, key)
	require.NoError(t, err)
	assert.False(t, ok, "the record lapsed a minute after the data")
	limits, err := slotlimit.Limits(ctx, b.Client, key)
	require.NoError(t, err)
	assert.Empty(t, limits, "nothing left to tell the limit")
}

// A Counter writes "limit=N" at "{KEY}/limit", once, expiring a minute
// after its key can; Recorded reads it with no lease time.
func TestCounterRecord(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		client, sets := recordClient(t, b)
		c, err := slotlimit.NewCounter(client, slotlimit.Config{Key: key, Limit: 3, TTL: 30 * time.Second})
		require.NoError(t, err)
		for range 2 {
			_, err = c.TryAcquire(ctx)
			require.NoError(t, err)
		}
		require.NoError(t, c.Release(ctx))
		assert.Equal(t, 1, sets.count(), "one SET")
		value, err := b.Client.Get(ctx, "{"+key+"}/limit").Result()
		require.NoError(t, err)
		assert.Equal(t, "limit=3", value)
		ttl, err := b.Client.PTTL(ctx, "{"+key+"}/limit").Result()
		require.NoError(t, err)
		assert.True(t, ttl > 30*time.Second && ttl <= record.TTL(30*time.Second), "record TTL %v", ttl)

		cfg, ok, err := slotlimit.Recorded(ctx, b.Client, key)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, slotlimit.Config{Key: key, Limit: 3}, cfg)
		limits, err := slotlimit.Limits(ctx, b.Client, key)
		require.NoError(t, err)
		assert.Empty(t, limits, "a Counter's record is not a Limiter's limit")
	})
}

// A record write that fails does not fail the call; it is tried again a
// few seconds later (record.Retry), not on the next call, so that a Redis
// that does not answer costs each call its own command alone
// (TestRecordNotSentBeforeEveryCallToAHungRedis), until it succeeds.
func TestRecordWriteFailureDoesNotFailCall(t *testing.T) {
	b := newMiniredis(t)
	ctx := context.Background()
	key := testKey(t, b)
	client, sets := recordClient(t, b)
	l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute})
	require.NoError(t, err)
	sets.fail(true)
	for _, holder := range []string{"a", "b"} {
		res, err := l.TryAcquire(ctx, holder)
		require.NoError(t, err, "a failed record write fails nothing")
		assert.True(t, res.Acquired)
	}
	assert.Equal(t, 1, sets.count(), "not tried again on the next call")
	_, ok, err := slotlimit.Recorded(ctx, b.Client, key)
	require.NoError(t, err)
	assert.False(t, ok)

	sets.fail(false)
	slotlimit.RecordDueNow(l) // as record.Retry later
	require.NoError(t, l.Release(ctx, "a"))
	_, err = l.TryAcquire(ctx, "a")
	require.NoError(t, err)
	_, err = l.TryAcquire(ctx, "c")
	require.NoError(t, err)
	assert.Equal(t, 2, sets.count(), "written on the first call after, then not again")
	_, ok, err = slotlimit.Recorded(ctx, b.Client, key)
	require.NoError(t, err)
	assert.True(t, ok)
}

// Recorded refuses bad input as Limits does, and takes a record it cannot
// read as none.
func TestRecordedInput(t *testing.T) {
	b := newMiniredis(t)
	ctx := context.Background()
	key := testKey(t, b)
	_, _, err := slotlimit.Recorded(ctx, nil, key)
	assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig)
	_, _, err = slotlimit.Recorded(ctx, b.Client, "a}b")
	assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig)
	var nilCtx context.Context
	_, _, err = slotlimit.Recorded(nilCtx, b.Client, key)
	assert.ErrorIs(t, err, slotlimit.ErrInvalidArgument)
	for _, junk := range []string{"limit=x", "limit=0", "limit=2&lease=-1", "%zz", "limit=2;lease=5"} {
		require.NoError(t, b.Client.Set(ctx, "{"+key+"}/limit", junk, 0).Err())
		_, ok, err := slotlimit.Recorded(ctx, b.Client, key)
		require.NoError(t, err, junk)
		assert.False(t, ok, junk)
	}
	require.NoError(t, b.Client.Del(ctx, "{"+key+"}/limit").Err())
	require.NoError(t, b.Client.RPush(ctx, "{"+key+"}/limit", "x").Err())
	_, _, err = slotlimit.Recorded(ctx, b.Client, key)
	assert.Error(t, err, "a record key of another type")
}
