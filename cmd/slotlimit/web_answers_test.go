package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/lock"
)

// The page answers as the commands do: it lists what ls lists, and
// answers a key that holds no such primitive, or a value of another type,
// in the commands' words, with a status that says which.

// wrongTypeScene writes, under a prefix of the test's own, values of a
// user's at the names beside four keys that a package keeps there
// ("{k}/q", a Limiter's queue; "{k}/adaptive", "{k}/delayqueue",
// "{k}/recent"), which discovery finds as candidates and ls leaves out,
// and one Limiter; it returns the prefix, the Limiter's key and the keys
// of the values by the kind they look like.
func wrongTypeScene(t *testing.T, client *redis.Client) (prefix, limiter string, keys map[string]string) {
	t.Helper()
	ctx := context.Background()
	prefix = webKey(t, "wt") + ":"
	keys = map[string]string{kindLimiter: prefix + "k", kindAdaptive: prefix + "wa", kindQueue: prefix + "wq", kindRecent: prefix + "wr"}
	sides := []string{"{" + keys[kindLimiter] + "}/q", "{" + keys[kindQueue] + "}/delayqueue", "{" + keys[kindRecent] + "}/recent"}
	for _, side := range sides {
		require.NoError(t, client.Set(ctx, side, "mine", time.Hour).Err())
	}
	adaptiveSide := "{" + keys[kindAdaptive] + "}/adaptive"
	require.NoError(t, client.Set(ctx, adaptiveSide, "mine", time.Hour).Err())
	limiter = prefix + "lim"
	l, err := slotlimit.New(client, slotlimit.Config{Key: limiter, Limit: 5, TTL: time.Hour})
	require.NoError(t, err)
	_, err = l.TryAcquire(ctx, "h")
	require.NoError(t, err)
	t.Cleanup(func() {
		client.Del(context.Background(), append(sides, adaptiveSide)...)
		deleteKeysHolding(client, limiter)
	})
	return prefix, limiter, keys
}

// deleteKeysHolding deletes every key whose name holds key: a
// primitive's keys.
func deleteKeysHolding(client *redis.Client, key string) {
	ctx := context.Background()
	for _, k := range client.Keys(ctx, "*"+key+"*").Val() {
		client.Del(ctx, k)
	}
}

// slotlimitRun runs slotlimit with args in-process, as main does, and returns
// its exit code, stdout and stderr.
func slotlimitRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	code := run(args, strings.NewReader(""), &stdout, &stderr)
	t.Logf("slotlimit %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	return code, stdout.String(), stderr.String()
}

// lsOf returns what ls -json lists of the keys that begin with prefix,
// as "kind key".
func lsOf(t *testing.T, u, prefix string) []string {
	t.Helper()
	code, stdout, stderr := slotlimitRun(t, "-u", u, "ls", "-json", prefix+"*")
	require.Equal(t, exitOK, code, stderr)
	var fs []found
	require.NoError(t, json.Unmarshal([]byte(stdout), &fs))
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind+" "+f.Key)
	}
	sort.Strings(out)
	return out
}

// The page lists exactly what ls lists: a value of a user's at a name
// that a package keeps beside a key is no primitive, so it is neither
// listed nor counted as found; and a primitive whose keys are deleted
// leaves the page, without waiting for the next search.
func TestWebListsWhatLsLists(t *testing.T) {
	u, client := redisURL(t)
	prefix, limiter, keys := wrongTypeScene(t, client)
	w := startWeb(t, "-u", u, "web", "-listen", "127.0.0.1:0")
	st := awaitState(t, w, "the limiter, read twice", func(st pageState) bool {
		p, ok := st.prim(kindLimiter, limiter)
		return ok && len(st.History[p.ID].T) >= 2
	})
	var shown []string
	for _, p := range st.Prims {
		assert.NotEqual(t, "gone", p.State, "%s %s", p.Kind, p.Key)
		if strings.HasPrefix(p.Key, prefix) {
			shown = append(shown, p.Kind+" "+p.Key)
		}
	}
	sort.Strings(shown)
	assert.Equal(t, []string{kindLimiter + " " + limiter}, shown, "the page lists the limiter alone")
	assert.Equal(t, lsOf(t, u, prefix), shown, "what ls lists")
	for kind, key := range keys {
		_, ok := st.prim(kind, key)
		assert.False(t, ok, "%s %s is not listed", kind, key)
	}
	if st.Found <= maxSampled {
		assert.Equal(t, len(st.Prims), st.Found, "the keys left out are not counted as found")
	}

	// The limiter's keys deleted: it leaves the page.
	deleteKeysHolding(client, limiter)
	awaitState(t, w, "the limiter gone from the page", func(st pageState) bool {
		_, ok := st.prim(kindLimiter, limiter)
		return !ok
	})
}

// getDetail reads /api/detail of the primitive of kind at key, and
// returns its status and its JSON's error.
func getDetail(t *testing.T, w *webRun, kind, key string) (int, string) {
	t.Helper()
	res, err := http.Get(w.url("/api/detail?" + url.Values{"kind": {kind}, "key": {key}}.Encode()))
	require.NoError(t, err)
	defer res.Body.Close()
	var out struct {
		Err string `json:"error"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	return res.StatusCode, out.Err
}

// A detail of a key that holds a value of another type is answered 409
// with the words the commands print; one of a key that holds no limiter
// 404 with count's answer, and one of a red packet that does not exist
// 404 with "no red packet at ID". None carries a script's error.
func TestWebDetailAnswersInTheCommandsWords(t *testing.T) {
	u, client := redisURL(t)
	ctx := context.Background()
	_, _, keys := wrongTypeScene(t, client)
	list := webKey(t, "list")
	require.NoError(t, client.RPush(ctx, list, "x").Err())
	t.Cleanup(func() { client.Del(context.Background(), list) })
	nosuch := webKey(t, "nosuch")
	w := startWeb(t, "-u", u, "web", "-listen", "127.0.0.1:0")

	for _, step := range []struct {
		kind, key string
		command   []string // the command whose words the page gives
		status    int
	}{
		{kindLimiter, list, []string{"count", list}, http.StatusConflict},
		{kindAdaptive, keys[kindAdaptive], []string{"adaptive", "show", keys[kindAdaptive]}, http.StatusConflict},
		{kindQueue, keys[kindQueue], []string{"queue", "stats", keys[kindQueue]}, http.StatusConflict},
		{kindRecent, keys[kindRecent], []string{"recent", "list", keys[kindRecent]}, http.StatusConflict},
		{kindLimiter, nosuch, []string{"count", nosuch}, http.StatusNotFound},
	} {
		code, msg := getDetail(t, w, step.kind, step.key)
		exit, _, stderr := slotlimitRun(t, append([]string{"-u", u}, step.command...)...)
		require.Equal(t, exitNo, exit, "%q: %s", step.command, stderr)
		assert.Equal(t, step.status, code, "%s %s", step.kind, step.key)
		assert.Equal(t, strings.TrimSpace(stderr), msg, "%s %s: the words of %q", step.kind, step.key, step.command)
		assert.NotContains(t, msg, "script", "%s %s", step.kind, step.key)
	}
	code, msg := getDetail(t, w, kindPacket, nosuch)
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "no red packet at "+nosuch, msg)

	// A key that the library refuses is bad usage, no failure of Redis's.
	code, msg = getDetail(t, w, kindLimiter, "a}b")
	assert.Equal(t, http.StatusBadRequest, code, "a key the library refuses: %s", msg)
}

// The page's writes answer as the commands do: a break of a free lock
// says it is free, as lock break does, and one of a lock that changed
// hands says so; a rate reset of a key with neither a record nor data
// says "no rate limit at KEY" (404), as rate reset does, and one of a key
// with data but no record says that the page cannot reset it; a write on
// a key of another type is explained in words (409).
func TestWebWritesAnswerInTheCommandsWords(t *testing.T) {
	u, client := redisURL(t)
	ctx := context.Background()
	w := startWeb(t, "-u", u, "web", "-listen", "127.0.0.1:0", "-allow-writes")
	write := w.writer(t)

	// A lock held under another token, then free.
	key := webKey(t, "lock")
	m, err := lock.New(client, lock.Config{Key: key, TTL: time.Hour})
	require.NoError(t, err)
	held, err := m.TryLock(ctx)
	require.NoError(t, err)
	token := held.Token()
	t.Cleanup(func() { deleteKeysHolding(client, key) })
	code, res := write(kindLock, key, "break", "not-"+token)
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, "lock "+key+" changed hands or lapsed before the break: nothing done", res.Message)
	require.NoError(t, held.Unlock(ctx))
	code, res = write(kindLock, key, "break", token)
	assert.Equal(t, http.StatusConflict, code)
	assert.False(t, res.Done)
	exit, stdout, stderr := slotlimitRun(t, "-u", u, "lock", "break", "-yes", key)
	require.Equal(t, exitNo, exit, stderr)
	assert.Equal(t, strings.TrimSpace(stdout), res.Message, "lock break's words")
	assert.Equal(t, "lock "+key+" is free: nothing to break", res.Message)

	// A rate limit that is not there.
	nosuch := webKey(t, "nosuch")
	code, res = write(kindRate, nosuch, "reset")
	assert.Equal(t, http.StatusNotFound, code)
	exit, _, stderr = slotlimitRun(t, "-u", u, "rate", "reset", nosuch)
	require.Equal(t, exitNo, exit, stderr)
	assert.Equal(t, strings.TrimSpace(stderr), res.Message, "rate reset's words")
	assert.Equal(t, "no rate limit at "+nosuch, res.Message)

	// Data, with no record beside it: nothing reset.
	data := webKey(t, "data")
	require.NoError(t, client.Set(ctx, data, "3", time.Hour).Err())
	t.Cleanup(func() { client.Del(context.Background(), data) })
	code, res = write(kindRate, data, "reset")
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, data+" holds data but no rate record (a Limiter writes one on its first call, and every minute while used): nothing reset", res.Message)
	n, err := client.Exists(ctx, data).Result()
	require.NoError(t, err)
	assert.EqualValues(t, 1, n, "nothing deleted")

	// A Counter's key, given to a lock break and a rate reset: refused in
	// the commands' words, and its count left alone.
	ctrKey := webKey(t, "ctr")
	ctr, err := slotlimit.NewCounter(client, slotlimit.Config{Key: ctrKey, Limit: 3, TTL: time.Hour})
	require.NoError(t, err)
	got, err := ctr.TryAcquire(ctx)
	require.NoError(t, err)
	require.True(t, got.Acquired)
	t.Cleanup(func() { deleteKeysHolding(client, ctrKey) })
	for _, w := range []struct {
		kind, action, arg, cmd string
		flags                  []string
	}{
		{kindLock, "break", "1", "lock", []string{"-yes"}},
		{kindRate, "reset", "", "rate", nil},
	} {
		code, res = write(w.kind, ctrKey, w.action, w.arg)
		assert.Equal(t, http.StatusConflict, code, w.action)
		assert.Equal(t, ctrKey+" holds a counter, not "+article(w.kind)+" "+w.kind+" (count "+ctrKey+" shows it)", res.Message, w.action)
		exit, _, stderr = slotlimitRun(t, append(append([]string{"-u", u, w.cmd, w.action}, w.flags...), ctrKey)...)
		require.Equal(t, exitNo, exit, stderr)
		assert.Equal(t, strings.TrimSpace(stderr), res.Message, "%s %s's words", w.cmd, w.action)
	}
	n, err = ctr.Count(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 1, n, "the count is left alone")

	// A force-release on a list.
	list := webKey(t, "list")
	require.NoError(t, client.RPush(ctx, list, "x").Err())
	t.Cleanup(func() { client.Del(context.Background(), list) })
	code, res = write(kindLimiter, list, "release", "h")
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, list+" holds a Redis list, not a limiter (another package's, or a value of yours)", res.Message)
}

// A primitive's own page shows the answer in the commands' words, not as
// a state that could not be read.
func TestWebInBrowserDetailAnswer(t *testing.T) {
	chromium(t)
	u, client := redisURL(t)
	list := webKey(t, "list")
	require.NoError(t, client.RPush(context.Background(), list, "x").Err())
	t.Cleanup(func() { client.Del(context.Background(), list) })
	w := startWeb(t, "-u", u, "web", "-listen", "127.0.0.1:0")
	b := startBrowser(t)
	b.navigate(t, w.url("/p?"+url.Values{"kind": {kindLimiter}, "key": {list}}.Encode()))
	var status string
	require.NoError(t, json.Unmarshal(b.await(t, "the detail's answer",
		`document.body.dataset.loaded && document.getElementById('status').textContent`), &status))
	assert.Equal(t, list+" holds a Redis list, not a limiter (another package's, or a value of yours)", status)
}
