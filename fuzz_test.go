package slotlimit_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/hashtag"
)

// The fuzz targets below feed the public API bad and odd input and hold it
// to its contract: no panic, and each input either works, round-tripping
// through Holders exactly, or is refused with ErrInvalidHolder,
// ErrInvalidConfig or ErrInvalidWeight before anything reaches Redis.
// They run against one miniredis per target, on a fixed clock, so that they
// are fast and hermetic; each iteration of FuzzHolder and FuzzConfig uses
// keys of its own, and every iteration clears what it leaves. A plain
// `go test` runs the seeds added here and those in testdata/fuzz.

// fuzzRedis is the miniredis one fuzz target runs against.
type fuzzRedis struct {
	mr     *miniredis.Miniredis
	client redis.UniversalClient
	keys   atomic.Int64
}

func newFuzzRedis(f *testing.F) *fuzzRedis {
	mr := miniredis.RunT(f)
	mr.SetTime(miniredisStart)
	mr.ClockTTL(true)
	client := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{mr.Addr()}})
	f.Cleanup(func() { client.Close() })
	return &fuzzRedis{mr: mr, client: client}
}

// key returns a key no other iteration uses.
func (r *fuzzRedis) key(prefix string) string {
	return fmt.Sprintf("fuzz:%s:%d", prefix, r.keys.Add(1))
}

// storedKeys returns every key in the miniredis but the settings records
// (see TestRecordWrittenOncePerHandle), which lapse a minute after the
// data they describe.
func (r *fuzzRedis) storedKeys() []string {
	var keys []string
	for _, k := range r.mr.Keys() {
		if !strings.HasSuffix(k, "/limit") && !strings.HasSuffix(k, ":limit") {
			keys = append(keys, k)
		}
	}
	return keys
}

// fuzzHolderSeeds are holder IDs worth trying: empty, at and past the
// length limit, and bytes that mean something to Redis keys, Lua or the
// notice format.
var fuzzHolderSeeds = []string{
	"",
	"d1",
	"{braces}",
	"}{",
	"a:b:c",
	"+1:2:3:x",
	"line\nbreak",
	"\r\n$3\r\nfoo\r\n",
	"\x00",
	"\x00\xff",
	"\xff\xfe\xfd",
	"空格 unicode ✓",
	"%d%s%%",
	"nil",
	"0",
	"-1",
	"1e+14",
	strings.Repeat("x", slotlimit.MaxHolderLen),
	strings.Repeat("x", slotlimit.MaxHolderLen+1),
	strings.Repeat("{}", slotlimit.MaxHolderLen/2),
	strings.Repeat("\xff", 64*1024),
}

func fuzzValidHolder(holder string) bool {
	return len(holder) >= 1 && len(holder) <= slotlimit.MaxHolderLen
}

// FuzzHolder takes, renews, re-weighs and releases a lease for an
// arbitrary holder ID: a valid one round-trips through Holders byte for
// byte, and an invalid one gets ErrInvalidHolder from every method and
// writes nothing.
func FuzzHolder(f *testing.F) {
	for _, h := range fuzzHolderSeeds {
		f.Add(h)
	}
	r := newFuzzRedis(f)
	f.Fuzz(func(t *testing.T, holder string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		defer r.mr.FlushAll() // whatever a failed iteration left behind
		key := r.key("holder")
		l, err := slotlimit.New(r.client, slotlimit.Config{Key: key, Limit: 3, TTL: time.Minute})
		require.NoError(t, err)
		x := l.Lease(holder)
		require.Equal(t, holder, x.Holder())

		if !fuzzValidHolder(holder) {
			_, err := l.TryAcquire(ctx, holder)
			assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder, "TryAcquire")
			_, err = l.TryAcquireN(ctx, holder, 2)
			assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder, "TryAcquireN")
			_, err = l.Acquire(ctx, holder)
			assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder, "Acquire")
			_, err = l.AcquireN(ctx, holder, 2)
			assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder, "AcquireN")
			err = l.Renew(ctx, holder)
			assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder, "Renew")
			err = l.Release(ctx, holder)
			assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder, "Release")
			err = x.Renew(ctx)
			assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder, "Lease.Renew")
			err = x.Release(ctx)
			assert.ErrorIs(t, err, slotlimit.ErrInvalidHolder, "Lease.Release")
			assert.Empty(t, r.mr.Keys(), "nothing is written for an invalid holder, not even a record")
			return
		}

		// holds checks that holder, and no one else, holds weight units.
		holds := func(step string, weight int64, expiresAt time.Time) {
			t.Helper()
			hs, err := l.Holders(ctx)
			require.NoError(t, err, step)
			require.Len(t, hs, 1, step)
			assert.Equal(t, holder, hs[0].ID, "%s: ID round-trips byte for byte", step)
			assert.Equal(t, weight, hs[0].Weight, step)
			assert.True(t, hs[0].ExpiresAt.Equal(expiresAt), "%s: ExpiresAt %v, want %v", step, hs[0].ExpiresAt, expiresAt)
			n, err := l.Count(ctx)
			require.NoError(t, err, step)
			assert.Equal(t, weight, n, step)
		}
		// free checks that no lease is left, and nothing else either.
		free := func(step string) {
			t.Helper()
			hs, err := l.Holders(ctx)
			require.NoError(t, err, step)
			assert.Empty(t, hs, step)
			n, err := l.Count(ctx)
			require.NoError(t, err, step)
			assert.Zero(t, n, step)
			assert.Empty(t, r.storedKeys(), "%s: no key left behind", step)
		}
		deadline := miniredisStart.Add(time.Minute)

		res, err := l.TryAcquire(ctx, holder)
		require.NoError(t, err, "TryAcquire")
		require.True(t, res.Acquired, "TryAcquire")
		assert.Equal(t, int64(1), res.Count)
		assert.Equal(t, int64(1), res.Weight)
		assert.True(t, res.ExpiresAt.Equal(deadline), "ExpiresAt %v", res.ExpiresAt)
		holds("TryAcquire", 1, deadline)

		err = l.Renew(ctx, holder)
		require.NoError(t, err, "Renew")
		err = x.Renew(ctx)
		require.NoError(t, err, "Lease.Renew")
		holds("Renew", 1, deadline)

		res, err = l.TryAcquireN(ctx, holder, 3)
		require.NoError(t, err, "TryAcquireN")
		require.True(t, res.Acquired, "TryAcquireN re-weighs")
		assert.Equal(t, int64(3), res.Count)
		assert.Equal(t, int64(3), res.Weight)
		holds("TryAcquireN 3", 3, deadline)

		// Another holder cannot squeeze in, and leaves holder's lease alone.
		other := "other"
		if holder == other {
			other = "another"
		}
		res, err = l.TryAcquire(ctx, other)
		require.NoError(t, err, "TryAcquire other")
		assert.False(t, res.Acquired, "TryAcquire other at the limit")
		holds("refused other", 3, deadline)

		res, err = l.TryAcquireN(ctx, holder, 2)
		require.NoError(t, err, "TryAcquireN 2")
		require.True(t, res.Acquired, "TryAcquireN 2")
		assert.Equal(t, int64(2), res.Weight)
		holds("TryAcquireN 2", 2, deadline)

		err = l.Release(ctx, holder)
		require.NoError(t, err, "Release")
		free("Release")
		err = l.Release(ctx, holder)
		require.ErrorIs(t, err, slotlimit.ErrNotHeld, "Release again")
		err = l.Renew(ctx, holder)
		require.ErrorIs(t, err, slotlimit.ErrNotHeld, "Renew after Release")

		// The waiting path takes free units at once.
		res, err = l.AcquireN(ctx, holder, 2)
		require.NoError(t, err, "AcquireN")
		require.True(t, res.Acquired, "AcquireN")
		assert.Equal(t, int64(2), res.Weight)
		holds("AcquireN", 2, deadline)
		err = x.Release(ctx)
		require.NoError(t, err, "Lease.Release")
		free("Lease.Release")
	})
}

// FuzzHolderHandoff has a release hand its units to a waiting holder with
// an arbitrary ID, which the waiter learns of from a pub/sub notice that
// carries the ID. Every iteration uses the same key, and so the same
// notice channel, which stays subscribed; each leaves the key empty.
func FuzzHolderHandoff(f *testing.F) {
	for _, h := range fuzzHolderSeeds {
		if fuzzValidHolder(h) {
			f.Add(h)
		}
	}
	r := newFuzzRedis(f)
	key := r.key("handoff")
	l, err := slotlimit.New(r.client, slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, holder string) {
		if !fuzzValidHolder(holder) {
			t.Skip("FuzzHolder covers invalid holders")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		first := "first"
		if holder == first {
			first = "the first"
		}
		res, err := l.TryAcquire(ctx, first)
		require.NoError(t, err)
		require.True(t, res.Acquired)

		type acquired struct {
			res slotlimit.Result
			err error
		}
		done := make(chan acquired, 1)
		go func() {
			res, err := l.Acquire(ctx, holder)
			done <- acquired{res, err}
		}()
		// Wait until holder is queued, so that the release hands it the slot.
		require.Eventually(t, func() bool {
			return r.mr.Exists("{"+key+"}/q") && len(r.zMembers(t, "{"+key+"}/q")) == 1
		}, 5*time.Second, time.Millisecond)
		err = l.Release(ctx, first)
		require.NoError(t, err)

		got := <-done
		require.NoError(t, got.err, "Acquire")
		assert.True(t, got.res.Acquired)
		assert.Equal(t, int64(1), got.res.Weight)
		assert.Equal(t, []string{holder}, holderIDs(t, l), "the waiter holds the slot")

		err = l.Release(ctx, holder)
		require.NoError(t, err)
		assert.Empty(t, holderIDs(t, l))
		r.client.Del(context.Background(), key, "{"+key+"}/w", "{"+key+"}/q", "{"+key+"}/qd", "{"+key+"}/qw")
	})
}

func (r *fuzzRedis) zMembers(t *testing.T, key string) []string {
	members, err := r.mr.ZMembers(key)
	require.NoError(t, err)
	return members
}

// fuzzHasHashTag reports whether key has a Redis Cluster hash tag: a '{' with
// a later '}', and at least one byte between the first '{' and the first
// '}' after it.
func fuzzHasHashTag(key string) bool {
	_, afterOpen, found := strings.Cut(key, "{")
	if !found {
		return false
	}
	tag, _, found := strings.Cut(afterOpen, "}")
	return found && tag != ""
}

// FuzzConfig builds a Limiter and a Counter from arbitrary Config values:
// each is refused with ErrInvalidConfig exactly when the Config is invalid,
// and otherwise works, for any key bytes, limit, lease time and weight:
// a weight from 1 to the limit is taken, reported and listed exactly, and
// any other gets ErrInvalidWeight.
func FuzzConfig(f *testing.F) {
	for _, seed := range []struct {
		key   string
		limit int64
		ttl   time.Duration
		fair  bool
		n     int64
	}{
		{"ar:0571", 60, 5 * time.Minute, false, 1},
		{"", 1, time.Minute, false, 1},
		{"a}b", 2, time.Minute, false, 1},
		{"}", 2, time.Minute, false, 1},
		{"{}", 2, time.Minute, false, 1},
		{"{}x}", 2, time.Minute, false, 1},
		{"a{b}c", 2, time.Minute, true, 2},
		{"{tenant}:ar:1", 3, time.Minute, true, 3},
		{"x{", 1, time.Minute, false, 1},
		{"line\nbreak\x00\xff", 1, time.Minute, false, 1},
		{"k", 0, time.Minute, false, 1},
		{"k", -1, time.Minute, false, 1},
		{"k", math.MinInt64, time.Minute, false, 1},
		// The scripts count units in Lua numbers, exact up to 2^53: a
		// higher limit is refused, and MaxLimit itself works.
		{"k", math.MaxInt64, time.Minute, false, math.MaxInt64},
		{"k", 1<<53 + 1, time.Minute, false, 1<<53 + 1},
		{"k", 1 << 53, time.Minute, false, 1 << 53},
		{"k", 1<<53 - 1, time.Minute, false, 1<<53 - 1},
		{"k", 1<<53 - 1, time.Minute, false, 123456789012345},
		{"k", 5, time.Minute, false, 0},
		{"k", 5, time.Minute, false, -1},
		{"k", 5, time.Minute, false, 6},
		{"k", 5, 0, false, 1},
		{"k", 5, time.Millisecond - 1, false, 1},
		{"k", 5, time.Millisecond, false, 1},
		{"k", 5, time.Millisecond + 1, false, 1},
		{"k", 5, -time.Nanosecond, false, 1},
		{"k", 5, math.MinInt64, false, 1},
		{"k", 5, math.MaxInt64, false, 1},
		{"k", 5, math.MaxInt64, true, 5},
		{"k", 5, slotlimit.MaxTTL, false, 1},
		{"k", 5, slotlimit.MaxTTL + 1, true, 5},
	} {
		f.Add(seed.key, seed.limit, int64(seed.ttl), seed.fair, seed.n)
	}
	r := newFuzzRedis(f)
	f.Fuzz(func(t *testing.T, key string, limit, ttlNanos int64, fair bool, n int64) {
		if len(key) > 4096 {
			t.Skip("long keys only slow the fuzzer down")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		defer r.mr.FlushAll() // whatever a failed iteration left behind
		ttl := time.Duration(ttlNanos)
		cfg := slotlimit.Config{Key: key, Limit: limit, TTL: ttl, Fair: fair}
		_ = cfg.String()

		invalid := key == "" || limit < 1 || limit > slotlimit.MaxLimit || ttl < 0 || (ttl > 0 && ttl < time.Millisecond) || ttl > slotlimit.MaxTTL
		noTag := strings.Contains(key, "}") && !fuzzHasHashTag(key)

		_, err := slotlimit.New(nil, cfg)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "New with a nil client")
		_, err = slotlimit.NewCounter(nil, cfg)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "NewCounter with a nil client")

		// The Limiter and the Counter each get fresh keys, the key fuzzed
		// being a suffix so that every byte of it still reaches Redis.
		want := cfg
		if want.TTL == 0 {
			want.TTL = slotlimit.DefaultTTL
		}
		prefix := r.key("config") + ":"
		lcfg := cfg
		if key != "" {
			lcfg.Key = prefix + key
		}
		l, err := slotlimit.New(r.client, lcfg)
		if invalid || noTag {
			assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "New(%#v)", lcfg)
			assert.Nil(t, l)
		} else {
			require.NoError(t, err, "New(%#v)", lcfg)
			want.Key = lcfg.Key
			assert.Equal(t, want, l.Config())
			fuzzLimiter(ctx, t, r, l, n)
		}

		want = cfg
		if want.TTL == 0 {
			want.TTL = slotlimit.DefaultCounterTTL
		}
		ccfg := cfg
		if key != "" {
			ccfg.Key = prefix + "counter:" + key
		}
		c, err := slotlimit.NewCounter(r.client, ccfg)
		if invalid || noTag {
			assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, "NewCounter(%#v)", ccfg)
			assert.Nil(t, c)
		} else {
			require.NoError(t, err, "NewCounter(%#v)", ccfg)
			want.Key = ccfg.Key
			assert.Equal(t, want, c.Config())
			fuzzCounter(ctx, t, r, c)
		}
		assert.Empty(t, r.storedKeys(), "no key left behind")
	})
}

// fuzzLimiter takes n units for one holder on a Limiter with a valid
// Config and checks the lease.
func fuzzLimiter(ctx context.Context, t *testing.T, r *fuzzRedis, l *slotlimit.Limiter, n int64) {
	cfg := l.Config()
	res, err := l.TryAcquireN(ctx, "h", n)
	if n < 1 || n > cfg.Limit {
		assert.ErrorIs(t, err, slotlimit.ErrInvalidWeight, "TryAcquireN(%d) with limit %d", n, cfg.Limit)
		assert.False(t, res.Acquired)
		assert.Empty(t, r.mr.Keys(), "nothing is written for an invalid weight, not even a record")
		return
	}
	require.NoError(t, err, "TryAcquireN(%d)", n)
	require.True(t, res.Acquired, "TryAcquireN(%d) on a free key", n)
	assert.Equal(t, n, res.Count, "Result.Count")
	assert.Equal(t, n, res.Weight, "Result.Weight")
	assert.Equal(t, cfg.Limit, res.Limit, "Result.Limit")
	// The lease time is kept to the millisecond, even the longest one.
	deadline := miniredisStart.Add(cfg.TTL).Truncate(time.Millisecond)
	assert.True(t, res.ExpiresAt.Equal(deadline), "Result.ExpiresAt %v, want %v", res.ExpiresAt, deadline)

	count, err := l.Count(ctx)
	require.NoError(t, err, "Count")
	assert.Equal(t, n, count, "Count")
	hs, err := l.Holders(ctx)
	require.NoError(t, err, "Holders")
	if assert.Len(t, hs, 1, "Holders") {
		assert.Equal(t, "h", hs[0].ID)
		assert.Equal(t, n, hs[0].Weight, "Holder.Weight")
		assert.True(t, hs[0].ExpiresAt.Equal(deadline), "Holder.ExpiresAt %v, want %v", hs[0].ExpiresAt, deadline)
	}

	err = l.Renew(ctx, "h")
	require.NoError(t, err, "Renew")
	err = l.Release(ctx, "h")
	require.NoError(t, err, "Release")
	count, err = l.Count(ctx)
	require.NoError(t, err, "Count after Release")
	assert.Zero(t, count, "Count after Release")
}

// fuzzCounter takes and gives back one slot of a Counter with a valid
// Config.
func fuzzCounter(ctx context.Context, t *testing.T, r *fuzzRedis, c *slotlimit.Counter) {
	res, err := c.TryAcquire(ctx)
	require.NoError(t, err, "Counter.TryAcquire")
	require.True(t, res.Acquired, "Counter.TryAcquire on a free key")
	assert.Equal(t, int64(1), res.Count)
	assert.Equal(t, int64(1), res.Weight)
	deadline := miniredisStart.Add(c.Config().TTL).Truncate(time.Millisecond)
	assert.True(t, res.ExpiresAt.Equal(deadline), "Counter Result.ExpiresAt %v, want %v", res.ExpiresAt, deadline)
	count, err := c.Count(ctx)
	require.NoError(t, err, "Counter.Count")
	assert.Equal(t, int64(1), count, "Counter.Count")
	err = c.Release(ctx)
	require.NoError(t, err, "Counter.Release")
	count, err = c.Count(ctx)
	require.NoError(t, err, "Counter.Count after Release")
	assert.Zero(t, count, "Counter.Count after Release")
	err = c.Release(ctx)
	require.ErrorIs(t, err, slotlimit.ErrNotHeld, "Counter.Release again")
	// A Counter keeps its key, at 0, until it expires.
	require.NoError(t, r.client.Del(ctx, c.Config().Key).Err())
	// Each Release leaves a record of its call beside the key, in its
	// cluster slot, which lapses by itself within a minute.
	prefix, ok := hashtag.SidePrefix(c.Config().Key)
	require.True(t, ok)
	records := 0
	for _, k := range r.storedKeys() {
		if strings.HasPrefix(k, prefix+"released:") {
			records++
			assert.Equal(t, hashSlot(c.Config().Key), hashSlot(k), "a record in the key's slot")
			ttl := r.mr.TTL(k)
			assert.True(t, ttl > 0 && ttl <= time.Minute, "a record lapses within a minute, not %v", ttl)
			r.mr.Del(k)
		}
	}
	assert.Equal(t, 2, records, "one record per Release")
}
