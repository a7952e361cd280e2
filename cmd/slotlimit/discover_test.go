package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
)

// classify finds the primitive that each of its keys names, in both forms
// of the names beside a key, and nothing in keys that are no package's.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		key, kind, of string
	}{
		{"{ar:1}/limit", kindLimiterOrCounter, "ar:1"},
		{"{t}:ar:1:limit", kindLimiterOrCounter, "{t}:ar:1"},
		{"{ar:1}/w", kindLimiter, "ar:1"},
		{"{ar:1}/q", kindLimiter, "ar:1"},
		{"{ar:1}/qd", kindLimiter, "ar:1"},
		{"{ar:1}/qw", kindLimiter, "ar:1"},
		{"{ar:1}/refused", kindLimiter, "ar:1"},
		{"{ar:1}/full:60", kindLimiter, "ar:1"},
		{"{t}:ar:1:full:60", kindLimiter, "{t}:ar:1"},
		{"{t}:ar:1:w", kindLimiter, "{t}:ar:1"},
		{"{jobs}/lock:q", kindLock, "jobs"},
		{"{jobs}/lock:owner:abc", kindLock, "jobs"},
		{"{t}:jobs:lock:owner:abc", kindLock, "{t}:jobs"},
		{"{t}:jobs:lock:qw", kindLock, "{t}:jobs"},
		{"{jobs}/delayqueue", kindQueue, "jobs"},
		{"{jobs}/delayqueue:info", kindQueue, "jobs"},
		{"{t}:jobs:delayqueue:leases", kindQueue, "{t}:jobs"},
		{"{recent:42}/recent", kindRecent, "recent:42"},
		{"{user:42}:views:recent", kindRecent, "{user:42}:views"},
		{"{recent:42}/recent:bounds", kindRecent, "recent:42"},
		{"{user:42}/ratelimit", kindRate, "user:42"},
		{"{user:42}/ratelimit:rate", kindRate, "user:42"},
		{"{t}:user:42:ratelimit", kindRate, "{t}:user:42"},
		{"{pay}/adaptive", kindAdaptive, "pay"},
		{"{pay}/adaptive:leases", kindAdaptive, "pay"},
		{"{pay}/adaptive:bounds", kindAdaptive, "pay"},
		{"{t}:pay:adaptive:q", kindAdaptive, "{t}:pay"},
		{"{redpacket:0}:redpacket:p:p1", kindPacket, "p1"},
		{"{redpacket:3}:redpacket:s:p:1", kindPacket, "p:1"},
		{"{my:pfx:12}:redpacket:p:x", kindPacket, "x"},
		// No package's: a plain key, the names of a package's other keys,
		// a channel, names beside a key that is itself a name beside one.
		{"ar:1", "", ""},
		{"{ar:1}", "", ""},
		{"{ar:1}/x", "", ""},
		{"{ar:1}/full:", "", ""},
		{"{ar:1}/full:x", "", ""},
		{"{redpacket:0}:redpacket:log", "", ""},
		{"{redpacket:0}:redpacket:due", "", ""},
		{"{redpacket:x}:redpacket:p:p1", "", ""},
		{"{jobs}/delayqueue:wake", "", ""},
		{"{jobs}/lock:free", "", ""},
		{"{jobs}/lock:", "", ""},
		{"{jobs}/recent:", "", ""},
		{"{t}:x:lock:q", kindLock, "{t}:x"}, // not a limiter's queue beside "{t}:x:lock"
		{"{t}:x:adaptive:q", kindAdaptive, "{t}:x"},
		{"{a}b}/w", "", ""},
		{"x:w", "", ""},
	} {
		c, ok := classify(tc.key)
		if tc.kind == "" {
			assert.False(t, ok, "%s: found %+v", tc.key, c)
			continue
		}
		if assert.True(t, ok, tc.key) {
			assert.Equal(t, tc.kind, c.kind, tc.key)
			assert.Equal(t, tc.of, c.key, tc.key)
		}
	}
	c, _ := classify("{ar:1}/full:60")
	assert.Equal(t, int64(60), c.fullLimit)
	c, _ = classify("{my:pfx:12}:redpacket:p:x")
	assert.Equal(t, "my:pfx", c.prefix)
	assert.Equal(t, 12, c.shard)
}

// globMatch matches as SCAN MATCH does on a real Redis.
func TestGlobMatchAsRedis(t *testing.T) {
	b := redistest.Redis(t)
	ctx := context.Background()
	var buf [4]byte
	rand.Read(buf[:])
	tag := "glob" + hex.EncodeToString(buf[:]) + ":"
	names := []string{"", "a", "ab", "abc", "b", "ba", "a*c", "a?c", "a[c", "a]c", "a\\c", "a-c", "x{y}/z", "{a}", "aXc", "a^c", "hello", "hallo", "hxllo", "heeeello"}
	for _, n := range names {
		require.NoError(t, b.Client.Set(ctx, tag+n, 1, 0).Err())
		t.Cleanup(func() { b.Client.Del(context.Background(), tag+n) })
	}
	patterns := []string{"*", "a*", "*c", "a?c", "a\\*c", "a\\?c", "a[bc]*", "a[^b]c", "a[a-c]*", "a[c-a]*", "h[ae]llo", "h[^e]llo", "h*llo",
		"a[\\]]c", "a\\\\c", "a[", "a[c", "{a}", "x{y}/*", "?", "??", "a-c", "a[-]c", "a[x-]c", "*[", "a[^]c", "**", "a**c", "\\a"}
	for _, p := range patterns {
		want := map[string]bool{}
		iter := b.Client.Scan(ctx, 0, tag+p, 10000).Iterator()
		for iter.Next(ctx) {
			want[iter.Val()[len(tag):]] = true
		}
		require.NoError(t, iter.Err())
		for _, n := range names {
			assert.Equal(t, want[n], globMatch(p, n), "pattern %q, key %q", p, n)
		}
	}
}

// packetShards gives a Shards count that places the packet in the shard
// its keys are in.
func TestPacketShards(t *testing.T) {
	for _, id := range []string{"p1", "p2", "x", "a long packet ID"} {
		for _, shards := range []int{1, 2, 7, 64, 1024} {
			n := shardOf(id, shards)
			s := packetShards(id, n)
			assert.Equal(t, n, shardOf(id, s), "%s in shard %d of %d: %d shards", id, n, shards, s)
		}
	}
}

// globMatch goes back only to the last '*' on a mismatch: a pattern of
// many stars against a long key that it does not match ends after
// len(pattern)×len(key) steps at most, not an exponential number.
func TestGlobMatchManyStars(t *testing.T) {
	key := strings.Repeat("a", 5000)
	pattern := strings.Repeat("*a", 30) + "*b"
	assert.False(t, globMatch(pattern, key))
	assert.True(t, globMatch(pattern, key+"b"))
}
