package main_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// refused runs args and checks that the command refused them in words,
// with exit code 1, stderr want and nothing on stdout.
func refused(t *testing.T, url, want string, args ...string) {
	t.Helper()
	r := cli(t, "", nil, append([]string{"-u", url}, args...)...)
	assert.Equal(t, 1, r.code, "%q", args)
	assert.Equal(t, want+"\n", r.stderr, "%q", args)
	assert.Empty(t, r.stdout, "%q", args)
}

// A Counter's key, found by the record the Counter keeps beside it: count
// shows its count against its recorded limit; holders and release say a
// counter keeps no holders; lock and rate commands refuse it, and leave
// its count alone.
func TestCounterKey(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		key := testKey(t, "cli-test:ctr:")
		ctr, err := slotlimit.NewCounter(b.Client, slotlimit.Config{Key: key, Limit: 3, TTL: time.Hour})
		require.NoError(t, err)
		res, err := ctr.TryAcquire(ctx)
		require.NoError(t, err)
		require.True(t, res.Acquired)

		r := cli(t, "", nil, "-u", url, "count", key)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, "1 of 3 units in use\n", r.stdout)
		r = cli(t, "", nil, "-u", url, "count", "-json", key)
		require.Equal(t, 0, r.code, r.stderr)
		var out struct {
			Key         string `json:"key"`
			Kind        string `json:"kind"`
			InUse       int64  `json:"in_use"`
			Limit       *int64 `json:"limit"`
			HolderCount int    `json:"holder_count"`
			QueueLength int    `json:"queue_length"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
		require.NotNil(t, out.Limit)
		assert.Equal(t, "counter", out.Kind)
		assert.Equal(t, key, out.Key)
		assert.Equal(t, int64(1), out.InUse)
		assert.Equal(t, int64(3), *out.Limit)
		r = cli(t, "", nil, "-u", url, "count", "-limit", "5", key)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, "1 of 5 units in use\n", r.stdout, "-limit overrides the record")

		noHolders := key + " holds a counter: it keeps a count, not holders (count " + key + " shows it)"
		refused(t, url, noHolders, "holders", key)
		refused(t, url, noHolders, "holders", "-json", key)
		refused(t, url, noHolders, "release", key, "a")
		refused(t, url, noHolders, "release", "-json", key, "a")

		notLock := key + " holds a counter, not a lock (count " + key + " shows it)"
		refused(t, url, notLock, "lock", "info", key)
		refused(t, url, notLock, "lock", "break", "-yes", key)
		notRate := key + " holds a counter, not a rate limit (count " + key + " shows it)"
		refused(t, url, notRate, "rate", "show", key)
		refused(t, url, notRate, "rate", "reset", key)
		refused(t, url, notRate, "rate", "reset", key, "-rate", "5", "-algorithm", "fixed-window")
		refused(t, url, notRate, "rate", "reset", key, "-rate", "5")
		n, err := ctr.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "the count, left alone")

		// Back at 0, it is a counter still.
		require.NoError(t, ctr.Release(ctx))
		r = cli(t, "", nil, "-u", url, "count", key)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, "0 of 3 units in use\n", r.stdout)
		refused(t, url, noHolders, "holders", key)
		refused(t, url, noHolders, "release", key, "a")
		refused(t, url, notLock, "lock", "break", "-yes", key)

		// A GCRA limit keeps its time beside the key, never at it: on a
		// Counter's key, it is a rate limit of its own.
		rl, err := ratelimit.New(b.Client, ratelimit.Config{})
		require.NoError(t, err)
		_, err = rl.AllowN(ctx, key, ratelimit.Limit{Rate: 10, Period: time.Hour}, 3)
		require.NoError(t, err)
		r = cli(t, "", nil, "-u", url, "rate", "show", key)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Regexp(t, `(?m)^allowed now +7 events$`, r.stdout)
	})
}

// A fixed window's count, found by its rate record, and a lock, found by
// its owner's record: the lock commands refuse the one, the rate commands
// the other, and the limiter commands both, each in words, changing
// nothing.
func TestFixedWindowAndLockKeys(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		window := testKey(t, "cli-test:window:")
		rl, err := ratelimit.New(b.Client, ratelimit.Config{})
		require.NoError(t, err)
		_, err = rl.AllowN(ctx, window, ratelimit.Limit{Rate: 10, Period: time.Hour, Algorithm: ratelimit.FixedWindow}, 2)
		require.NoError(t, err)
		notLock := window + " holds a rate limit's count, not a lock (rate show " + window + " shows it)"
		refused(t, url, notLock, "lock", "info", window)
		refused(t, url, notLock, "lock", "break", "-yes", window)
		refused(t, url, window+" holds a rate limit's count, not a limiter (rate show "+window+" shows it)", "count", window)
		assert.Equal(t, "2", b.Client.Get(ctx, window).Val(), "the count, left alone")

		key := testKey(t, "cli-test:lock:")
		m, err := lock.New(b.Client, lock.Config{Key: key, TTL: time.Hour})
		require.NoError(t, err)
		l, err := m.TryLock(ctx)
		require.NoError(t, err)
		notRate := key + " holds a lock, not a rate limit (lock info " + key + " shows it)"
		refused(t, url, notRate, "rate", "show", key)
		refused(t, url, notRate, "rate", "reset", key, "-rate", "5", "-algorithm", "fixed-window")
		refused(t, url, key+" holds a lock, not a limiter (lock info "+key+" shows it)", "holders", key)
		assert.NoError(t, l.Refresh(ctx), "the lock, still its owner's")
		r := cli(t, "", nil, "-u", url, "lock", "info", key)
		assert.Equal(t, 0, r.code, "a lock's own command reads it")
	})
}

// rate show and rate reset read what the key holds before they ask for
// the limit: a key of another type, or a string that is not a count, is
// explained in words with exit code 1, whether the limit is given or not.
func TestRateExplainsWrongTypeFirst(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		list := testKey(t, "cli-test:list:")
		require.NoError(t, b.Client.RPush(ctx, list, "x").Err())
		str := testKey(t, "cli-test:str:")
		require.NoError(t, b.Client.Set(ctx, str, "hello", time.Hour).Err())
		for key, typ := range map[string]string{list: "list", str: "string"} {
			want := key + " holds a Redis " + typ + ", not a rate limit (another package's, or a value of yours)"
			for _, cmd := range []string{"show", "reset"} {
				refused(t, url, want, "rate", cmd, key)
				refused(t, url, want, "rate", cmd, key, "-rate", "5", "-algorithm", "fixed-window")
			}
		}
		assert.Equal(t, "hello", b.Client.Get(ctx, str).Val())
	})
}

// release on a key with no holder, no queue and no record says there is
// no limiter there, as count does.
func TestReleaseNoLimiter(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		key := testKey(t, "cli-test:nosuch:")
		refused(t, url, "no limiter at "+key, "release", key, "x")
		refused(t, url, "no limiter at "+key, "release", "-json", key, "x")
	})
}
