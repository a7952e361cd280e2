package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
	"github.com/slotlimit/slotlimit/observe"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// Every write whose reply is lost for good returns an error matching
// ErrOutcomeUnknown, the module's one value; bad input and Redis error
// replies never match it, and the specific input errors match
// ErrInvalidArgument.
func TestLostReplyIsOutcomeUnknown(t *testing.T) {
	require.True(t, errors.Is(ratelimit.ErrOutcomeUnknown, slotlimit.ErrOutcomeUnknown))
	for _, err := range []error{ratelimit.ErrInvalidKey, ratelimit.ErrInvalidN, ratelimit.ErrInvalidLimit, ratelimit.ErrCrossSlot} {
		assert.ErrorIs(t, err, ratelimit.ErrInvalidArgument, "%v", err)
		assert.NotErrorIs(t, err, ratelimit.ErrOutcomeUnknown, "%v", err)
	}
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client, cutter := b.CutClient(t)
		limiter, plain := newLimiter(t, client), newLimiter(t, b.Client)
		for _, limit := range slowLimits {
			key := b.Key(t, "rl-test:")
			require.Equal(t, int64(3), remaining(t, plain, key, limit), "%v: the script is loaded", limit)
			require.NoError(t, plain.Reset(ctx, key, limit), "%v: the script is loaded", limit)
			_, err := plain.AllowAll(ctx, []ratelimit.Rule{{Key: key, Limit: limit, N: 3}, {Key: key + "x", Limit: limit}})
			require.ErrorIs(t, err, ratelimit.ErrCrossSlot)

			calls := map[string]func() error{
				"Allow": func() error { _, err := limiter.Allow(ctx, key, limit); return err },
				"AllowN": func() error {
					_, err := limiter.AllowN(ctx, key, limit, 2)
					return err
				},
				"AllowAll": func() error {
					_, err := limiter.AllowAll(ctx, []ratelimit.Rule{{Key: key, Limit: limit}})
					return err
				},
			}
			for name, call := range calls {
				cutter.Arm(10, "evalsha", key)
				err := call()
				cutter.Arm(0)
				require.Error(t, err, "%v: %s", limit, name)
				assert.ErrorIs(t, err, ratelimit.ErrOutcomeUnknown, "%v: %s: %v", limit, name, err)
				assert.ErrorIs(t, err, slotlimit.ErrOutcomeUnknown, "%v: %s", limit, name)
				assert.NotErrorIs(t, err, ratelimit.ErrInvalidArgument, "%v: %s", limit, name)
				require.NoError(t, plain.Reset(ctx, key, limit))
			}
			cutter.Arm(10, resetCommand(limit), key)
			err = limiter.Reset(ctx, key, limit)
			cutter.Arm(0)
			assert.ErrorIs(t, err, ratelimit.ErrOutcomeUnknown, "%v: Reset: %v", limit, err)
			assert.Equal(t, int64(3), remaining(t, plain, key, limit), "%v: called again, Reset deletes again", limit)

			// Bad input and a Redis error reply are known outcomes.
			_, err = limiter.AllowN(ctx, key, limit, -1)
			assert.ErrorIs(t, err, ratelimit.ErrInvalidArgument)
			assert.NotErrorIs(t, err, ratelimit.ErrOutcomeUnknown)
			list := b.Key(t, "rl-test:list:")
			require.NoError(t, b.Client.RPush(ctx, list, "x").Err())
			_, err = limiter.Allow(ctx, list, slowLimits[1])
			require.ErrorContains(t, err, "WRONGTYPE")
			assert.NotErrorIs(t, err, ratelimit.ErrOutcomeUnknown)
		}
	})
}

// The Observer hears each call's outcome once, as its final event:
// Acquired when the events were counted, Refused when not, Done for a
// Reset, and Error with the error, bad input included.
func TestObserverReportsEachCallOnce(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rec := &observetest.Recorder{}
		limiter, err := ratelimit.New(b.Client, ratelimit.Config{Observer: rec})
		require.NoError(t, err)
		for _, limit := range slowLimits {
			key := b.Key(t, "rl-test:")
			_, err := limiter.AllowN(ctx, key, limit, 2)
			require.NoError(t, err)
			_, err = limiter.Allow(ctx, key, limit)
			require.NoError(t, err)
			_, err = limiter.Allow(ctx, key, limit)
			require.NoError(t, err)
			_, err = limiter.AllowAll(ctx, []ratelimit.Rule{{Key: key, Limit: limit}})
			require.NoError(t, err)
			require.NoError(t, limiter.Reset(ctx, key, limit))
			_, err = limiter.AllowN(ctx, key, limit, -1)
			require.Error(t, err)

			events := rec.Take()
			require.Equal(t, []observe.Kind{observe.Acquired, observe.Acquired, observe.Refused, observe.Refused, observe.Done, observe.Error},
				observetest.Kinds(events), "%v", limit)
			for i, want := range []struct {
				op           string
				units, inUse int64
			}{{"AllowN", 2, 2}, {"Allow", 1, 3}, {"Allow", 1, 3}, {"AllowAll", 1, 3}, {"Reset", 0, -1}, {"AllowN", -1, -1}} {
				e := events[i]
				assert.Equal(t, "ratelimit", e.Package, "%v: event %d", limit, i)
				assert.Equal(t, want.op, e.Op, "%v: event %d", limit, i)
				assert.Equal(t, key, e.Key, "%v: event %d", limit, i)
				assert.Equal(t, want.units, e.Units, "%v: event %d", limit, i)
				assert.Equal(t, want.inUse, e.InUse, "%v: event %d", limit, i)
				assert.Equal(t, int64(3), e.Limit, "%v: event %d", limit, i)
				assert.True(t, e.Kind.Final())
			}
			assert.ErrorIs(t, events[5].Err, ratelimit.ErrInvalidN)
		}
	})
}

// A GCRA limit, a slotlimit.Limiter and a lock given one key keep apart:
// none reads or changes the others' data. A FixedWindow keeps its count at
// the key itself, the classic script's layout, and refuses a key holding
// another package's value with WRONGTYPE, writing nothing.
func TestSameKeyAsOtherPackages(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter := newLimiter(t, b.Client)
		gcra := ratelimit.Limit{Rate: 2, Period: time.Hour}
		window := ratelimit.Limit{Rate: 2, Period: time.Hour, Algorithm: ratelimit.FixedWindow}

		key := b.Key(t, "rl-test:")
		slots, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 1, TTL: time.Hour})
		require.NoError(t, err)
		res, err := slots.TryAcquire(ctx, "holder")
		require.NoError(t, err)
		require.True(t, res.Acquired)
		for range 2 {
			r, err := limiter.Allow(ctx, key, gcra)
			require.NoError(t, err)
			assert.True(t, r.Allowed, "the holder is no event")
		}
		r, err := limiter.Allow(ctx, key, gcra)
		require.NoError(t, err)
		assert.False(t, r.Allowed)
		require.NoError(t, limiter.Reset(ctx, key, gcra))
		count, err := slots.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), count, "the events and the Reset left the holder")
		_, err = limiter.Allow(ctx, key, window)
		assert.ErrorContains(t, err, "WRONGTYPE", "a fixed window refuses the limiter's key")
		assert.ErrorContains(t, limiter.Reset(ctx, key, window), "WRONGTYPE")
		count, err = slots.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), count)
		res, err = slots.TryAcquire(ctx, "other")
		require.NoError(t, err)
		assert.False(t, res.Acquired, "the limit is the limiter's, as before")

		key = b.Key(t, "rl-test:")
		mutex, err := lock.New(b.Client, lock.Config{Key: key, TTL: time.Hour})
		require.NoError(t, err)
		l, err := mutex.TryLock(ctx)
		require.NoError(t, err)
		token := b.Client.Get(ctx, key).Val()
		r, err = limiter.AllowN(ctx, key, gcra, 2)
		require.NoError(t, err)
		assert.True(t, r.Allowed)
		require.NoError(t, limiter.Reset(ctx, key, gcra))
		_, err = limiter.Allow(ctx, key, window)
		assert.Error(t, err, "a fixed window refuses the lock's token")
		assert.Error(t, limiter.Reset(ctx, key, window))
		assert.Equal(t, token, b.Client.Get(ctx, key).Val(), "the lock's string is untouched")
		_, err = mutex.TryLock(ctx)
		assert.ErrorIs(t, err, lock.ErrNotObtained, "the lock is held, as before")
		_ = l
	})
}

// A key that ends in the name a GCRA limit keeps its time at beside
// another key, and, for GCRA, a key with a '}' but no hash tag, are
// refused with ErrInvalidKey, nothing sent.
func TestKeysThatWouldMeetAreInvalid(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	limiter := newLimiter(t, b.Client)
	window := ratelimit.Limit{Rate: 1, Period: time.Second, Algorithm: ratelimit.FixedWindow}
	for _, tt := range []struct {
		key   string
		limit ratelimit.Limit
	}{
		{"{k}/ratelimit", window},
		{"{k}:ratelimit", window},
		{"{k}:x:ratelimit", ratelimit.PerSecond(1)},
		{"{k}/recent", window},                   // a recent list's
		{"{k}/delayqueue:leases", window},        // a delay queue's
		{"{t}:k:lock:q", ratelimit.PerSecond(1)}, // a lock's queue
		{"{k}/full:1", window},                   // a Limiter's full marker
		{"{k}/released:x", window},               // a Counter's release record
		{"a}b", ratelimit.PerSecond(1)},
	} {
		_, err := limiter.Allow(ctx, tt.key, tt.limit)
		assert.ErrorIs(t, err, ratelimit.ErrInvalidKey, "%q %v", tt.key, tt.limit)
		assert.ErrorIs(t, limiter.Reset(ctx, tt.key, tt.limit), ratelimit.ErrInvalidKey, "%q %v", tt.key, tt.limit)
	}
	assert.Empty(t, b.Client.Keys(ctx, "*").Val(), "nothing was written")
	res, err := limiter.Allow(ctx, "a}b", window)
	require.NoError(t, err)
	assert.True(t, res.Allowed, "a fixed window counts at the key itself")
}
