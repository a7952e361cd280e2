package main_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/recent"
)

// newRecentScene returns the key of a list that holds /a, /b and /c,
// added in that order, a millisecond or more apart by the server's
// clock.
func newRecentScene(t *testing.T, b *redistest.Backend) (string, *recent.List) {
	t.Helper()
	key := testKey(t, "cli-test:recent:")
	l, err := recent.New(b.Client, recent.Config{Key: key, Max: 50, TTL: time.Hour})
	require.NoError(t, err)
	for _, v := range []string{"/a", "/b", "/c"} {
		require.NoError(t, l.Add(context.Background(), v))
		b.Advance(2 * time.Millisecond)
	}
	return key, l
}

type itemOut struct {
	Value string    `json:"value"`
	At    time.Time `json:"at"`
}

// recent list prints the items newest first, with the server's time of
// their last Add: with -json an array of {"value", "at"}.
func TestRecentList(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		key, _ := newRecentScene(t, b)
		r := cli(t, "", nil, "-u", url, "recent", "list", "-json", key)
		require.Equal(t, 0, r.code)
		var raw []map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &raw))
		require.Len(t, raw, 3)
		for _, obj := range raw {
			assert.Len(t, obj, 2, "value and at: %v", obj)
			assert.IsType(t, "", obj["value"])
			assert.IsType(t, "", obj["at"], "a time, in RFC 3339")
		}
		var items []itemOut
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &items))
		assert.Equal(t, []string{"/c", "/b", "/a"}, []string{items[0].Value, items[1].Value, items[2].Value}, "newest first")
		assert.True(t, items[0].At.After(items[1].At) && items[1].At.After(items[2].At), "%v", items)
		assert.WithinDuration(t, b.Now(), items[0].At, time.Minute, "the server's clock")

		r = cli(t, "", nil, "-u", url, "recent", "list", key, "-offset", "1", "-n", "1")
		require.Equal(t, 0, r.code)
		lines := strings.Split(r.stdout, "\n")
		assert.Equal(t, key+": 1 item after the 1 newest, newest first; 3 items in all", lines[0])
		assert.Regexp(t, `(?m)^# +VALUE +ADDED AT \(SERVER CLOCK\)$`, r.stdout)
		assert.Regexp(t, `(?m)^2 +/b +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC$`, r.stdout)
		assert.NotContains(t, r.stdout, "/a")
		assert.NotContains(t, r.stdout, "/c")

		r = cli(t, "", nil, "-u", url, "recent", "list", "-json", key+":none")
		assert.Equal(t, 1, r.code)
		assert.Equal(t, "[]\n", r.stdout)
		assert.Equal(t, "no recent list at "+key+":none\n", r.stderr)
		r = cli(t, "", nil, "-u", url, "recent", "list", key+":none")
		assert.Equal(t, 1, r.code)
		assert.Empty(t, r.stdout)
		assert.Equal(t, "no recent list at "+key+":none\n", r.stderr)
	})
}

// recent list shows the bounds the list's Lists recorded, and, without
// -max-age, leaves out the items older than the recorded MaxAge, as they
// do; -max-age 0 lists them all. A list whose record has lapsed is listed
// whole, its bounds unknown.
func TestRecentListBounds(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		key, _ := newRecentScene(t, b)
		t.Cleanup(func() { b.Client.Del(context.Background(), "{"+key+"}/recent:bounds") })
		r := cli(t, "", nil, "-u", url, "recent", "list", key)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "\nbounds: max 50, max age none, as its Lists recorded them\n")

		require.NoError(t, b.Client.Del(ctx, "{"+key+"}/recent:bounds").Err(), "as if it lapsed")
		r = cli(t, "", nil, "-u", url, "recent", "list", key)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "\nbounds: unknown")
		assert.Contains(t, r.stdout, "3 items in all")

		aging := testKey(t, "cli-test:recent:")
		t.Cleanup(func() { b.Client.Del(context.Background(), "{"+aging+"}/recent:bounds") })
		l, err := recent.New(b.Client, recent.Config{Key: aging, Max: 10, MaxAge: time.Hour})
		require.NoError(t, err)
		require.NoError(t, l.Add(ctx, "/old"))
		r = cli(t, "", nil, "-u", url, "recent", "list", aging)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "\nbounds: max 10, max age 1h0m0s, as its Lists recorded them\n")
		if !b.Real { // the server's clock moves at once only on miniredis
			b.Advance(45 * time.Minute)
			// Another List's Add, since l records at most once a minute of
			// the local clock, which stands still here.
			l2, err := recent.New(b.Client, recent.Config{Key: aging, Max: 10, MaxAge: time.Hour})
			require.NoError(t, err)
			require.NoError(t, l2.Add(ctx, "/new"))
			b.Advance(30 * time.Minute) // /old is 75 minutes old, /new 30
			r = cli(t, "", nil, "-u", url, "recent", "list", "-json", aging)
			require.Equal(t, 0, r.code, r.stderr)
			var items []itemOut
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &items))
			require.Len(t, items, 1, "the recorded MaxAge leaves /old out")
			assert.Equal(t, "/new", items[0].Value)
			r = cli(t, "", nil, "-u", url, "recent", "list", "-json", "-max-age", "0", aging)
			require.Equal(t, 0, r.code, r.stderr)
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &items))
			assert.Len(t, items, 2, "-max-age 0 lists all")
		}

	})
}

// A key beside a list that holds a value of another type is explained in
// words, with exit code 1.
func TestRecentWrongType(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		key := testKey(t, "cli-test:recent:")
		side := "{" + key + "}/recent"
		require.NoError(t, b.Client.Set(ctx, side, "mine", time.Minute).Err())
		t.Cleanup(func() { b.Client.Del(context.Background(), side) })
		for _, args := range [][]string{{"recent", "list", key}, {"recent", "remove", key, "x"}} {
			r := cli(t, "", nil, append([]string{"-u", url}, args...)...)
			assert.Equal(t, 1, r.code, "%q: %s", args, r.stderr)
			assert.Contains(t, r.stderr, key+": a key beside it holds a value of another type than a recent list keeps there", "%q", args)
		}
	})
}

// recent remove takes values out; none of them in the list is the answer
// no.
func TestRecentRemove(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		key, l := newRecentScene(t, b)
		r := cli(t, "", nil, "-u", url, "recent", "remove", key, "/b", "/nope")
		require.Equal(t, 0, r.code)
		assert.Equal(t, "removed 1 of 2 values from "+key+" (1 not in the list)\n", r.stdout)
		r = cli(t, "", nil, "-u", url, "recent", "remove", "-json", key, "/b")
		assert.Equal(t, 1, r.code)
		assert.Equal(t, int64(0), jsonInts(t, r.stdout, "removed")["removed"])
		items, err := l.Items(context.Background(), 0, 10)
		require.NoError(t, err)
		require.Len(t, items, 2)
		assert.Equal(t, "/c", items[0].Value)
		assert.Equal(t, "/a", items[1].Value)
	})
}

// A remove whose reply was lost, and which the command's client sent
// again, reports the value removed, though the second run found nothing.
func TestResentRecentRemoveReportsRemoved(t *testing.T) {
	url, _ := server(t)
	key, l := newRecentScene(t, redistest.Redis(t))
	_, err := l.Remove(context.Background(), "/absent") // loads the remove script
	require.NoError(t, err)
	proxy, cuts := cutProxy(t, url, "evalsha", "/b")
	r := cli(t, "", nil, "-u", proxy, "recent", "remove", key, "/b")
	assert.Equal(t, int32(1), cuts.Load(), "the reply was lost")
	assert.Equal(t, 0, r.code, "removed, as the first run answered")
	assert.Equal(t, "removed 1 of 1 value from "+key+"\n", r.stdout)
	n, err := l.Len(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(2), n)
}
