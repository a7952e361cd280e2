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
		require.Equal(t, 0, r.code)
		assert.Equal(t, "[]\n", r.stdout)
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
