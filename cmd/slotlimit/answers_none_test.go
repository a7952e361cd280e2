package main_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/recent"
	"github.com/slotlimit/slotlimit/redpacket"
)

// queue requeue, drop and cancel of a key that holds no delay queue say
// "no delay queue at KEY" and exit 1, as queue stats does, before they
// ask and without writing anything: a cancel leaves no record behind.
// With -json, they print the count 0 first.
func TestQueueWritesOnNoQueue(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		key := testKey(t, "cli-test:typo:")
		for _, cmd := range []string{"requeue", "drop", "cancel"} {
			r := cli(t, "y\n", nil, "-u", url, "queue", cmd, key, "SOMEID")
			assert.Equal(t, 1, r.code, cmd)
			assert.Empty(t, r.stdout, cmd)
			assert.Equal(t, "no delay queue at "+key+"\n", r.stderr, "%s: nothing asked", cmd)

			r = cli(t, "", nil, "-u", url, "queue", cmd, "-json", key, "SOMEID", "OTHER")
			assert.Equal(t, 1, r.code, cmd)
			assert.JSONEq(t, `{"key": "`+key+`", "ids": ["SOMEID", "OTHER"], "count": 0}`, r.stdout, cmd)
			assert.Equal(t, "no delay queue at "+key+"\n", r.stderr, cmd)
		}
		written, _ := keysOf(t, b.Client, key)
		assert.Empty(t, written, "nothing written")

		r := cli(t, "", nil, "-u", url, "ls", key+"*")
		assert.Equal(t, 1, r.code)
		assert.Equal(t, "nothing found\n", r.stderr)
	})
}

// A delay queue left with nothing but a Cancel's record of its answer
// (which lives a minute) is none: ls does not list it, as queue stats
// does not find it. A queue that holds messages beside such a record is
// listed once.
func TestLsSkipsCancelRecordAlone(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		gone, kept := testKey(t, "cli-test:cq:gone:"), testKey(t, "cli-test:cq:kept:")
		for _, key := range []string{gone, kept} {
			q, err := delayqueue.New(b.Client, delayqueue.Config{Key: key})
			require.NoError(t, err)
			id, err := q.Push(ctx, []byte("x"), time.Hour)
			require.NoError(t, err)
			if key == kept {
				_, err = q.Push(ctx, []byte("y"), time.Hour)
				require.NoError(t, err)
			}
			n, err := q.Cancel(ctx, id)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			records, _ := keysOf(t, b.Client, key+"}/delayqueue:cancelled:")
			assert.NotEmpty(t, records, "the cancel's record")
		}

		r := cli(t, "", nil, "-u", url, "ls", gone+"*")
		assert.Equal(t, 1, r.code)
		assert.Empty(t, r.stdout)
		assert.Equal(t, "nothing found\n", r.stderr)
		r = cli(t, "", nil, "-u", url, "queue", "stats", gone)
		assert.Equal(t, 1, r.code)
		assert.Equal(t, "no delay queue at "+gone+"\n", r.stderr)

		r = cli(t, "", nil, "-u", url, "ls", "-json", kept+"*")
		require.Equal(t, 0, r.code)
		var got []struct {
			Kind, Key, State string
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
		require.Len(t, got, 1)
		assert.Equal(t, "delay queue", got[0].Kind)
		assert.Equal(t, kept, got[0].Key)
		assert.Equal(t, "0 ready, 1 delayed, 0 in flight, 0 dead", got[0].State)
	})
}

// recent remove on a key that holds no item says "no recent list at KEY"
// and exits 1, writing nothing; with -json, it prints removed 0 first.
func TestRecentRemoveOnNoList(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		key := testKey(t, "cli-test:nosuch:")
		r := cli(t, "", nil, "-u", url, "recent", "remove", key, "/x")
		assert.Equal(t, 1, r.code)
		assert.Empty(t, r.stdout)
		assert.Equal(t, "no recent list at "+key+"\n", r.stderr)
		r = cli(t, "", nil, "-u", url, "recent", "remove", "-json", key, "/x")
		assert.Equal(t, 1, r.code)
		assert.JSONEq(t, `{"key": "`+key+`", "values": ["/x"], "removed": 0}`, r.stdout)
		assert.Equal(t, "no recent list at "+key+"\n", r.stderr)
		written, _ := keysOf(t, b.Client, key)
		assert.Empty(t, written, "nothing written")

		// A list that holds items, none of them given: removed 0, as before.
		l, err := recent.New(b.Client, recent.Config{Key: key, Max: 10})
		require.NoError(t, err)
		require.NoError(t, l.Add(context.Background(), "/a"))
		r = cli(t, "", nil, "-u", url, "recent", "remove", key, "/x")
		assert.Equal(t, 1, r.code)
		assert.Equal(t, "removed 0 of 1 value from "+key+" (1 not in the list)\n", r.stdout)
		assert.Empty(t, r.stderr)
	})
}

// packet show of a packet that does not exist says "no red packet at ID",
// and where it looked, on stderr; with -json, {"id", "found": false}
// first.
func TestPacketShowNoPacket(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		r := cli(t, "", nil, "-u", url, "packet", "show", "nosuch")
		assert.Equal(t, 1, r.code)
		assert.Empty(t, r.stdout)
		assert.Equal(t, "no red packet at nosuch\n"+
			`(looked under prefix "redpacket" and 1 shard: never created, its keys lapsed, or its Store has another -prefix or -shards)`+"\n", r.stderr)
		r = cli(t, "", nil, "-u", url, "packet", "show", "-json", "-prefix", "px", "-shards", "4", "nosuch")
		assert.Equal(t, 1, r.code)
		assert.JSONEq(t, `{"id": "nosuch", "found": false}`, r.stdout)
		assert.True(t, strings.HasPrefix(r.stderr, "no red packet at nosuch\n(looked under prefix \"px\" and 4 shards:"), r.stderr)
	})
}

// ls -json gives a red packet's shard, 0 included, and no other kind's.
func TestLsJSONGivesShardZero(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		prefix := strings.ReplaceAll(testKey(t, "cli-test-shard:"), "/", "-")
		s, err := redpacket.New(b.Client, redpacket.Config{Prefix: prefix})
		require.NoError(t, err)
		require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "p0", Total: 10, Count: 2, Split: redpacket.Equal, TTL: time.Hour}))
		q, err := delayqueue.New(b.Client, delayqueue.Config{Key: prefix + ":q"})
		require.NoError(t, err)
		_, err = q.Push(ctx, []byte("x"), time.Hour)
		require.NoError(t, err)

		r := cli(t, "", nil, "-u", url, "ls", "-json")
		require.Equal(t, 0, r.code)
		var got []map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
		var packet, queue map[string]any
		for _, p := range got {
			switch {
			case p["kind"] == "red packet" && p["prefix"] == prefix:
				packet = p
			case p["kind"] == "delay queue" && p["key"] == prefix+":q":
				queue = p
			}
		}
		require.NotNil(t, packet, r.stdout)
		require.NotNil(t, queue, r.stdout)
		assert.Equal(t, "p0", packet["key"])
		assert.Equal(t, 0.0, packet["shard"], "a Store of one shard keeps its packets in shard 0")
		assert.Contains(t, packet, "state")
		assert.NotContains(t, queue, "shard")
		assert.NotContains(t, queue, "prefix")
	})
}

// web takes no arguments and no -json, and says so in words; its usage
// line ends with its last flag, and its -h lists no -json.
func TestWebUsage(t *testing.T) {
	r := cli(t, "", nil, "web", "extra")
	assert.Equal(t, 2, r.code)
	assert.Empty(t, r.stdout)
	assert.Equal(t, "slotlimit web: web takes no arguments; got 1 argument(s)\n"+
		"usage: slotlimit [flags] web [flags]\n"+
		"Run 'slotlimit -h' for the commands and flags.\n", r.stderr)
	for _, args := range [][]string{{"web", "-json"}, {"-json", "web"}, {"web", "-json=true", "-listen", "127.0.0.1:0"}} {
		r = cli(t, "", nil, args...)
		assert.Equal(t, 2, r.code, "%q", args)
		assert.Empty(t, r.stdout, "%q: nothing served", args)
		assert.Contains(t, r.stderr, "slotlimit web: -json: web serves a page, and prints no JSON\n", "%q", args)
	}
	r = cli(t, "", nil, "web", "-h")
	assert.Equal(t, 0, r.code)
	assert.True(t, strings.HasPrefix(r.stdout, "usage: slotlimit [flags] web [flags]\n"), r.stdout)
	assert.NotContains(t, r.stdout, "-json")
	assert.Contains(t, r.stdout, "-listen")

	r = cli(t, "", nil, "ls", "-h")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "-json", "the other commands keep it")
	r = cli(t, "", nil, "queue", "stats", "a", "b")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "queue stats takes KEY; got 2 argument(s)\n")
}

// adaptive show -h and adaptive watch -h say that -min and -max stand in
// for the bounds the Limiters recorded, which the commands read.
func TestAdaptiveBoundsHelp(t *testing.T) {
	for _, cmd := range []string{"show", "watch"} {
		r := cli(t, "", nil, "adaptive", cmd, "-h")
		assert.Equal(t, 0, r.code)
		assert.NotContains(t, r.stdout, "does not keep", cmd)
		assert.Contains(t, r.stdout, "the Limiters' Config.Min N; -min or -max replaces both bounds the Limiters recorded", cmd)
		assert.Contains(t, r.stdout, "the Limiters' Config.Max N; -min or -max replaces both bounds the Limiters recorded", cmd)
	}
}
