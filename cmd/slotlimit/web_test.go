package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
	"github.com/slotlimit/slotlimit/ratelimit"
	"github.com/slotlimit/slotlimit/recent"
	"github.com/slotlimit/slotlimit/redpacket"
)

// The tests of web run it in-process, as main does, against the tests'
// real Redis, and talk to it over HTTP.

// A webRun is one run of web: its address, its write token ("" when
// read-only) and its stdout after the first lines.
type webRun struct {
	addr, token string
	exit        chan int
}

// startWeb runs slotlimit with args (web's, the URL's) in-process, and
// returns once it has printed its first lines. It stops web when the test
// ends, and checks that web then exits 0.
func startWeb(t *testing.T, args ...string) *webRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	webContext = func() context.Context { return ctx }
	pr, pw := io.Pipe()
	var stderr strings.Builder
	w := &webRun{exit: make(chan int, 1)}
	go func() {
		code := run(args, strings.NewReader(""), pw, &stderr)
		pw.Close()
		w.exit <- code
	}()
	lines := bufio.NewScanner(pr)
	require.True(t, lines.Scan(), "web printed nothing; stderr: %s", stderr.String())
	first := lines.Text()
	addr, ok := strings.CutPrefix(first, "listening on http://")
	require.True(t, ok, "first line %q", first)
	w.addr = addr
	require.True(t, lines.Scan())
	if token, ok := strings.CutPrefix(lines.Text(), "write token: "); ok {
		w.token = token
	}
	go io.Copy(io.Discard, pr)
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-w.exit:
			assert.Equal(t, 0, code, "web's exit code after its context ended; stderr: %s", stderr.String())
		case <-time.After(30 * time.Second):
			t.Error("web did not exit after its context ended")
		}
		webContext = context.Background
	})
	return w
}

// url returns the URL of path on w.
func (w *webRun) url(path string) string { return "http://" + w.addr + path }

// webKey returns a key of the test's own.
func webKey(t *testing.T, prefix string) string {
	var b [6]byte
	rand.Read(b[:])
	return prefix + ":" + t.Name() + ":" + hex.EncodeToString(b[:])
}

// redisURL returns the URL of the tests' real Redis, and a client of it.
func redisURL(t *testing.T) (string, *redis.Client) {
	t.Helper()
	addr := redistest.Addr(t)
	client := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { client.Close() })
	return "redis://" + addr, client
}

// The first line is "listening on http://ADDR", with the port bound; the
// page is served with the headers that keep it safe.
func TestWebFirstLineAndHeaders(t *testing.T) {
	u, _ := redisURL(t)
	w := startWeb(t, "-u", u, "web", "-listen", "127.0.0.1:0")
	assert.Empty(t, w.token, "read-only: no token")
	_, port, err := net.SplitHostPort(w.addr)
	require.NoError(t, err)
	assert.NotEqual(t, "0", port)
	for _, path := range []string{"/", "/p?kind=limiter&key=k", "/static/index.js", "/static/style.css", "/api/state"} {
		res, err := http.Get(w.url(path))
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, path)
		assert.Equal(t, contentPolicy, res.Header.Get("Content-Security-Policy"), path)
		assert.Contains(t, contentPolicy, "script-src 'self'")
		assert.NotContains(t, contentPolicy, "unsafe-inline")
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"), path)
		assert.Equal(t, "DENY", res.Header.Get("X-Frame-Options"), path)
	}
}

// Every asset the page loads is embedded, and the page names nothing of
// another origin: it works without a network.
func TestWebPageIsSelfContained(t *testing.T) {
	for _, name := range []string{"index.html", "detail.html", "index.js", "detail.js", "common.js", "style.css"} {
		b, err := webFiles.ReadFile("web/" + name)
		require.NoError(t, err, name)
		// The SVG namespace is a name, which nothing fetches.
		s := strings.ReplaceAll(string(b), "'http://www.w3.org/2000/svg'", "")
		assert.Empty(t, regexp.MustCompile(`https?://|//cdn|@import`).FindAllString(s, -1), "%s names another origin", name)
		if strings.HasSuffix(name, ".html") {
			assert.NotRegexp(t, `<script>|<script [^>]*>[^<]`, s, "%s: no inline script", name)
			assert.NotContains(t, s, "style=", "%s: no inline style", name)
		}
	}
}

// -listen beyond loopback is a usage error without -allow-remote; a
// listen that fails, or a bad -listen, exits as the exit codes say.
func TestWebListen(t *testing.T) {
	u, _ := redisURL(t)
	for _, listen := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:8379", "[::]:0"} {
		var stdout, stderr strings.Builder
		code := run([]string{"-u", u, "web", "-listen", listen}, strings.NewReader(""), &stdout, &stderr)
		assert.Equal(t, exitUsage, code, listen)
		assert.Empty(t, stdout.String(), listen)
		assert.Contains(t, stderr.String(), "-allow-remote", listen)
	}
	var stdout, stderr strings.Builder
	assert.Equal(t, exitUsage, run([]string{"-u", u, "web", "-listen", "nocolon"}, strings.NewReader(""), &stdout, &stderr))

	// A port that is taken: the server cannot listen, exit 3.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	stdout.Reset()
	stderr.Reset()
	assert.Equal(t, exitRedis, run([]string{"-u", u, "web", "-listen", l.Addr().String()}, strings.NewReader(""), &stdout, &stderr))
	assert.Empty(t, stdout.String())
	assert.Contains(t, stderr.String(), "listen")
}

// A request whose Host names neither the address web listens on nor
// localhost is refused, as a DNS rebinding would send.
func TestWebRefusesForeignHost(t *testing.T) {
	u, _ := redisURL(t)
	w := startWeb(t, "-u", u, "web", "-listen", "127.0.0.1:0")
	_, port, _ := net.SplitHostPort(w.addr)
	for host, want := range map[string]int{
		w.addr:                     http.StatusOK,
		"localhost:" + port:        http.StatusOK,
		"[::1]:" + port:            http.StatusOK,
		"attacker.example:" + port: http.StatusForbidden,
		"attacker.example":         http.StatusForbidden,
		"127.0.0.1:1":              http.StatusForbidden,
		"10.0.0.1:" + port:         http.StatusForbidden,
	} {
		req, err := http.NewRequest(http.MethodGet, w.url("/api/state"), nil)
		require.NoError(t, err)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, want, res.StatusCode, "Host %s", host)
	}
}

// post sends a write to w: the form, with the token in the header when
// token is not "", and the headers given.
func post(t *testing.T, w *webRun, method string, form url.Values, token string, headers map[string]string) (int, writeResult) {
	t.Helper()
	req, err := http.NewRequest(method, w.url("/api/write"), strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if token != "" {
		req.Header.Set(tokenHeader, token)
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var out writeResult
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// writer returns a function that sends w a write, with its token: the
// primitive of kind at key, the action and its args.
func (w *webRun) writer(t *testing.T) func(kind, key, action string, args ...string) (int, writeResult) {
	return func(kind, key, action string, args ...string) (int, writeResult) {
		t.Helper()
		return post(t, w, http.MethodPost, url.Values{"kind": {kind}, "key": {key}, "action": {action}, "arg": args}, w.token, nil)
	}
}

// A write is refused, and changes nothing in Redis, without the token,
// with a wrong one, from another origin, as a GET, and when web runs
// without -allow-writes; with all of it right, it is done.
func TestWebWritesAreGuarded(t *testing.T) {
	u, client := redisURL(t)
	ctx := context.Background()
	key := webKey(t, "lock")
	m, err := lock.New(client, lock.Config{Key: key, TTL: time.Hour})
	require.NoError(t, err)
	held, err := m.TryLock(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { held.Unlock(context.Background()) })
	token := held.Token()
	form := url.Values{"kind": {kindLock}, "key": {key}, "action": {"break"}, "arg": {token}}
	stillHeld := func(step string) {
		t.Helper()
		info, err := m.Inspect(ctx)
		require.NoError(t, err)
		assert.Equal(t, token, info.Token, "%s: the lock is still held by its owner", step)
	}

	ro := startWeb(t, "-u", u, "web", "-listen", "127.0.0.1:0")
	code, res := post(t, ro, http.MethodPost, form, "anything", nil)
	assert.Equal(t, http.StatusForbidden, code, "without -allow-writes")
	assert.Contains(t, res.Message, "-allow-writes")
	stillHeld("without -allow-writes")

	w := startWeb(t, "-u", u, "web", "-listen", "127.0.0.1:0", "-allow-writes")
	require.NotEmpty(t, w.token)
	origin := "http://" + w.addr
	for _, step := range []struct {
		name    string
		method  string
		token   string
		headers map[string]string
		want    int
	}{
		{"no token", http.MethodPost, "", map[string]string{"Origin": origin}, http.StatusForbidden},
		{"a wrong token", http.MethodPost, strings.Repeat("0", len(w.token)), map[string]string{"Origin": origin}, http.StatusForbidden},
		{"a token one character short", http.MethodPost, w.token[:len(w.token)-1], nil, http.StatusForbidden},
		{"another Origin", http.MethodPost, w.token, map[string]string{"Origin": "http://attacker.example"}, http.StatusForbidden},
		{"another port as Origin", http.MethodPost, w.token, map[string]string{"Origin": "http://127.0.0.1:1"}, http.StatusForbidden},
		{"a null Origin", http.MethodPost, w.token, map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"cross-site, by Sec-Fetch-Site", http.MethodPost, w.token, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"same-site, by Sec-Fetch-Site", http.MethodPost, w.token, map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{"another Host", http.MethodPost, w.token, map[string]string{"Host": "attacker.example"}, http.StatusForbidden},
		{"a GET", http.MethodGet, w.token, map[string]string{"Origin": origin}, http.StatusMethodNotAllowed},
		{"a PUT", http.MethodPut, w.token, map[string]string{"Origin": origin}, http.StatusMethodNotAllowed},
	} {
		code, _ := post(t, w, step.method, form, step.token, step.headers)
		assert.Equal(t, step.want, code, step.name)
		stillHeld(step.name)
	}

	// The token in the form, instead of the header, with the page's own
	// Origin: done.
	withToken := url.Values{}
	for k, v := range form {
		withToken[k] = v
	}
	withToken.Set("token", w.token)
	code, res = post(t, w, http.MethodPost, withToken, "", map[string]string{"Origin": origin, "Sec-Fetch-Site": "same-origin"})
	assert.Equal(t, http.StatusOK, code, res.Message)
	assert.True(t, res.Done)
	info, err := m.Inspect(ctx)
	require.NoError(t, err)
	assert.False(t, info.Held(), "the lock was broken")

	// Again: it changed hands (here, is free), so nothing is done.
	code, res = post(t, w, http.MethodPost, form, w.token, nil)
	assert.Equal(t, http.StatusConflict, code, res.Message)
	assert.False(t, res.Done)
}

// The writes do what the commands do: force-release a limiter's holder,
// requeue and drop dead letters, reset a rate limit.
func TestWebWrites(t *testing.T) {
	u, client := redisURL(t)
	ctx := context.Background()
	w := startWeb(t, "-u", u, "web", "-listen", "127.0.0.1:0", "-allow-writes")
	write := w.writer(t)

	key := webKey(t, "lim")
	l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: 3, TTL: time.Hour})
	require.NoError(t, err)
	_, err = l.TryAcquire(ctx, "h1")
	require.NoError(t, err)
	code, res := write(kindLimiter, key, "release", "h1")
	assert.Equal(t, http.StatusOK, code, res.Message)
	n, err := l.Count(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "released")
	code, _ = write(kindLimiter, key, "release", "h1")
	assert.Equal(t, http.StatusConflict, code, "held nothing")

	qkey := webKey(t, "queue")
	q, err := delayqueue.New(client, delayqueue.Config{Key: qkey, MaxAttempts: 1, Visibility: time.Second})
	require.NoError(t, err)
	_, err = q.Push(ctx, []byte("p"), 0)
	require.NoError(t, err)
	msg, err := q.Poll(ctx)
	require.NoError(t, err)
	require.NoError(t, q.Nack(ctx, msg, 0)) // its last attempt: dead
	_, _, _, dead, err := q.Len(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, dead)
	code, res = write(kindQueue, qkey, "requeue", msg.ID)
	assert.Equal(t, http.StatusOK, code, res.Message)
	ready, _, _, dead, err := q.Len(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 1, ready)
	assert.Zero(t, dead)
	code, _ = write(kindQueue, qkey, "drop", msg.ID)
	assert.Equal(t, http.StatusConflict, code, "not a dead letter any more")

	// A delayed message cancelled: gone, and a second cancel finds none.
	later, err := q.Push(ctx, []byte("later"), time.Hour)
	require.NoError(t, err)
	code, res = write(kindQueue, qkey, "cancel", later)
	assert.Equal(t, http.StatusOK, code, res.Message)
	_, delayed, _, _, err := q.Len(ctx)
	require.NoError(t, err)
	assert.Zero(t, delayed, "cancelled")
	code, _ = write(kindQueue, qkey, "cancel", later)
	assert.Equal(t, http.StatusConflict, code, "nothing left to cancel")

	// A rate limit given its full allowance again, under its recorded limit.
	rkey := webKey(t, "rate")
	rl, err := ratelimit.New(client, ratelimit.Config{})
	require.NoError(t, err)
	limit := ratelimit.Limit{Rate: 10, Period: time.Hour}
	_, err = rl.AllowN(ctx, rkey, limit, 4)
	require.NoError(t, err)
	code, res = write(kindRate, rkey, "reset")
	assert.Equal(t, http.StatusOK, code, res.Message)
	after, err := rl.Inspect(ctx, rkey, limit)
	require.NoError(t, err)
	assert.EqualValues(t, 10, after.Remaining, "the full allowance")

	code, _ = write(kindLimiter, key, "explode", "x")
	assert.Equal(t, http.StatusBadRequest, code, "no such write")
	code, _ = write(kindLimiter, key, "release")
	assert.Equal(t, http.StatusBadRequest, code, "no holder")
	code, _ = write(kindLimiter, "a}b", "release", "h1")
	assert.Equal(t, http.StatusBadRequest, code, "a key the library refuses")
}

// A scene is one of each primitive the page shows, made by the library's
// own calls, and a rate limit of the other algorithm.
type scene struct {
	keys    map[string]string // kind -> key, as discovery names it; a GCRA rate limit
	window  string            // a fixed window's key, found by its rate record alone
	limiter *slotlimit.Limiter
}

func newScene(t *testing.T, client redis.UniversalClient) *scene {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := &scene{keys: map[string]string{}}
	key := func(kind, name string) string {
		k := webKey(t, name)
		s.keys[kind] = k
		return k
	}
	var err error
	s.limiter, err = slotlimit.New(client, slotlimit.Config{Key: key(kindLimiter, "lim"), Limit: 10, TTL: time.Hour})
	require.NoError(t, err)
	_, err = s.limiter.TryAcquireN(ctx, "a", 2)
	require.NoError(t, err)

	c, err := slotlimit.NewCounter(client, slotlimit.Config{Key: key(kindCounter, "ctr"), Limit: 3, TTL: time.Hour})
	require.NoError(t, err)
	_, err = c.TryAcquire(ctx)
	require.NoError(t, err)

	// A lock held, and a caller of Lock waiting for it.
	m, err := lock.New(client, lock.Config{Key: key(kindLock, "mutex"), TTL: time.Hour})
	require.NoError(t, err)
	held, err := m.TryLock(ctx)
	require.NoError(t, err)
	waitCtx, stopWaiting := context.WithCancel(context.Background())
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		if lk, err := m.Lock(waitCtx); err == nil {
			lk.Unlock(context.Background())
		}
	}()
	t.Cleanup(func() {
		stopWaiting()
		<-waited
		held.Unlock(context.Background())
	})
	require.Eventually(t, func() bool {
		info, err := m.Inspect(ctx)
		return err == nil && info.Waiters == 1
	}, 15*time.Second, 10*time.Millisecond, "the waiter queues")

	q, err := delayqueue.New(client, delayqueue.Config{Key: key(kindQueue, "queue")})
	require.NoError(t, err)
	_, err = q.Push(ctx, []byte("later"), time.Hour)
	require.NoError(t, err)

	list, err := recent.New(client, recent.Config{Key: key(kindRecent, "recent"), Max: 10})
	require.NoError(t, err)
	require.NoError(t, list.Add(ctx, "x", "y", "z"))

	var b [4]byte
	rand.Read(b[:])
	store, err := redpacket.New(client, redpacket.Config{Prefix: "web" + hex.EncodeToString(b[:]), Shards: 4})
	require.NoError(t, err)
	packet := key(kindPacket, "packet")
	require.NoError(t, store.Create(ctx, redpacket.Packet{ID: packet, Total: 1000, Count: 10, Split: redpacket.Equal}))
	_, err = store.Grab(ctx, packet, "u1")
	require.NoError(t, err)

	rl, err := ratelimit.New(client, ratelimit.Config{})
	require.NoError(t, err)
	_, err = rl.Allow(ctx, key(kindRate, "gcra"), ratelimit.Limit{Rate: 10, Period: time.Hour})
	require.NoError(t, err)
	s.window = webKey(t, "window")
	_, err = rl.AllowN(ctx, s.window, ratelimit.Limit{Algorithm: ratelimit.FixedWindow, Rate: 5, Period: time.Hour}, 2)
	require.NoError(t, err)

	a, err := adaptive.New(client, adaptive.Config{Key: key(kindAdaptive, "adaptive"), Min: 2, Max: 40, Initial: 17, TTL: time.Hour})
	require.NoError(t, err)
	_, err = a.TryAcquire(ctx)
	require.NoError(t, err)
	return s
}

// awaitState reads web's /api/state until ok says it holds what the test
// waits for, at most a minute (rounds come once a second), and returns it.
func awaitState(t *testing.T, w *webRun, what string, ok func(pageState) bool) pageState {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := http.Get(w.url("/api/state"))
		require.NoError(t, err)
		var st pageState
		err = json.NewDecoder(res.Body).Decode(&st)
		res.Body.Close()
		require.NoError(t, err)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("web's state never showed %s: %+v", what, st.Prims)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// prim returns the state of the primitive of kind at key, if st has it.
func (st pageState) prim(kind, key string) (primState, bool) {
	for _, p := range st.Prims {
		if p.Kind == kind && p.Key == key {
			return p, true
		}
	}
	return primState{}, false
}

// The server samples each primitive found, keeps its history, and serves
// each one's detail.
func TestWebSamplesAndDetails(t *testing.T) {
	u, client := redisURL(t)
	s := newScene(t, client)
	w := startWeb(t, "-u", u, "web", "-listen", "127.0.0.1:0")
	st := awaitState(t, w, "every primitive of the scene, twice", func(st pageState) bool {
		for kind, key := range s.keys {
			p, ok := st.prim(kind, key)
			if !ok || len(st.History[p.ID].T) < 2 {
				return false
			}
		}
		_, ok := st.prim(kindRate, s.window)
		return ok
	})
	lim, _ := st.prim(kindLimiter, s.keys[kindLimiter])
	assert.Equal(t, "2 of 10 units in use, 0 waiting", lim.State)
	require.NotNil(t, lim.Vals[0])
	assert.EqualValues(t, 2, *lim.Vals[0], "in use")
	require.NotNil(t, lim.Vals[1])
	assert.EqualValues(t, 10, *lim.Vals[1], "the recorded limit")
	ctr, _ := st.prim(kindCounter, s.keys[kindCounter])
	assert.Equal(t, "1 of 3 units in use", ctr.State)
	lk, _ := st.prim(kindLock, s.keys[kindLock])
	assert.Regexp(t, `^held by (.+ )?pid \d+, .* left, 1 waiting$`, lk.State, "the owner's description, by default its host and process")
	win, _ := st.prim(kindRate, s.window)
	assert.Equal(t, "fixed window 5/1h0m0s, 3 allowed now", win.State)
	assert.Empty(t, win.Err)
	gcra, _ := st.prim(kindRate, s.keys[kindRate])
	assert.Equal(t, "gcra 10/1h0m0s, 9 allowed now", gcra.State)
	assert.Equal(t, maxSampled, st.Cap)
	q, _ := st.prim(kindQueue, s.keys[kindQueue])
	k, _ := kindOf(kindQueue)
	late := slices.IndexFunc(k.Figures, func(f [2]string) bool { return f[0] == lateFigure })
	require.NotNil(t, q.Vals[late], "the lateness is known")
	assert.Zero(t, *q.Vals[late], "no message is due: none is late")
	assert.False(t, st.Writes)

	for kind, key := range s.keys {
		p, _ := st.prim(kind, key)
		assert.Empty(t, p.Err, kind)
		q := url.Values{"kind": {kind}, "key": {key}}
		if p.Prefix != "" {
			q.Set("prefix", p.Prefix)
			q.Set("shard", strconv.Itoa(p.Shard))
		}
		res, err := http.Get(w.url("/api/detail?" + q.Encode()))
		require.NoError(t, err)
		var d detail
		require.NoError(t, json.NewDecoder(res.Body).Decode(&d))
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, kind)
		assert.NotEmpty(t, d.Summary, kind)
		switch kind {
		case kindLimiter:
			assert.Contains(t, d.Summary, [2]string{"in use", "2 of 10 units in use"}, "the recorded limit")
			require.NotEmpty(t, d.Tables)
			require.Len(t, d.Tables[0].Rows, 1)
			assert.Equal(t, "a", d.Tables[0].Rows[0][0], "the holder")
		case kindCounter:
			assert.Contains(t, d.Summary, [2]string{"in use", "1 of 3 units in use"}, "the recorded limit")
		case kindLock:
			assert.Contains(t, d.Summary, [2]string{"state", "held"})
			assert.Contains(t, d.Summary, [2]string{"waiting", "1"})
			assert.NotContains(t, d.Summary, [2]string{"owner", "unknown"}, "a Mutex describes its owner by default")
		case kindQueue:
			require.Len(t, d.Tables, 4, "ready, delayed, in flight, dead")
			assert.Equal(t, "delayed", d.Tables[1].Title)
			require.Len(t, d.Tables[1].Rows, 1)
			assert.Equal(t, "later", d.Tables[1].Rows[0][4], "the payload")
		case kindRate:
			assert.Contains(t, d.Summary, [2]string{"allowed now", "9 events"})
			require.Len(t, d.Actions, 1)
			assert.Equal(t, "reset", d.Actions[0].Name)
		case kindRecent:
			assert.Contains(t, d.Summary, [2]string{"items", "3"})
			assert.Contains(t, d.Summary, [2]string{"bounds", "at most 10 items"}, "the bounds its Lists recorded")
			require.Len(t, d.Tables[0].Rows, 3)
			assert.Equal(t, "z", d.Tables[0].Rows[0][0], "newest first")
		case kindPacket:
			assert.Contains(t, d.Summary, [2]string{"shares left", "9 of 10"})
			require.Len(t, d.Tables[0].Rows, 1)
			assert.Equal(t, "u1", d.Tables[0].Rows[0][1])
		case kindAdaptive:
			assert.Contains(t, d.Summary, [2]string{"limit", "17"})
			assert.Contains(t, d.Summary, [2]string{"bounds", "2..40"}, "the bounds its Limiters recorded")
			assert.Contains(t, d.Summary, [2]string{"in flight", "1"})
			require.Len(t, d.Tables[0].Rows, 1)
		}
	}

	// The fixed window's page: its limit, from its record, and what it
	// allows now.
	res, err := http.Get(w.url("/api/detail?" + url.Values{"kind": {kindRate}, "key": {s.window}}.Encode()))
	require.NoError(t, err)
	var d detail
	require.NoError(t, json.NewDecoder(res.Body).Decode(&d))
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, d.Summary, [2]string{"limit", "5 per 1h0m0s (fixed window)"})
	assert.Contains(t, d.Summary, [2]string{"allowed now", "3 events"})
}

// slotlimit -h names web, its default address and its flags.
func TestWebInHelp(t *testing.T) {
	var stdout, stderr strings.Builder
	require.Equal(t, exitOK, run([]string{"-h"}, strings.NewReader(""), &stdout, &stderr))
	for _, s := range []string{"\n  web ", defaultListen, "-listen ADDR", "-allow-writes", "-allow-remote", `"listening on http://ADDR"`} {
		assert.Contains(t, stdout.String(), s)
	}
	stdout.Reset()
	require.Equal(t, exitOK, run([]string{"web", "-h"}, strings.NewReader(""), &stdout, &stderr))
	assert.Contains(t, stdout.String(), "-allow-writes")
	assert.Contains(t, stdout.String(), `(default "127.0.0.1:8379")`)
	stdout.Reset()
	assert.Equal(t, exitUsage, run([]string{"-u", "127.0.0.1:1", "web", "extra"}, strings.NewReader(""), &stdout, &stderr), "web takes no argument")
}
