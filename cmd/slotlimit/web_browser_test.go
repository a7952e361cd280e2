package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/skipnote"
)

// The page in a real browser: headless Chromium, from the OS's packages,
// driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
// JSON messages ended by a NUL, on file descriptors 3 and 4), so that the
// test needs no library beyond the standard one.

// browserEnv, set to 1, makes a missing Chromium fail the tests that
// need it, instead of skipping them.
const browserEnv = "SLOTLIMIT_REQUIRE_BROWSER"

// browserBound bounds each wait on the browser: far above what a loaded
// machine takes, so that only a page that never shows what is waited for
// fails.
const browserBound = 90 * time.Second

// chromium returns the path of a Chromium, or skips t (fails it, with
// SLOTLIMIT_REQUIRE_BROWSER=1) when there is none.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	err := errors.New("no chromium, chromium-browser or google-chrome on PATH")
	if os.Getenv(browserEnv) == "1" {
		t.Fatalf("headless Chromium required (%s=1) but unavailable: %v", browserEnv, err)
	}
	skipnote.Skip(t, "headless Chromium", err, "install chromium, or set "+browserEnv+"=1 to fail instead")
	return ""
}

// A browser is a headless Chromium with one page, driven over a pipe.
type browser struct {
	cmd     *exec.Cmd
	in      *os.File // its fd 3: commands
	out     *bufio.Reader
	mu      sync.Mutex
	id      int
	session string
}

// startBrowser starts a headless Chromium with one blank page, and ends
// it when the test ends.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromium(t)
	cmdR, cmdW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-extensions", "--disable-background-networking", "--remote-debugging-pipe",
		"--user-data-dir="+t.TempDir(), "about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, outW}
	require.NoError(t, cmd.Start())
	cmdR.Close()
	outW.Close()
	b := &browser{cmd: cmd, in: cmdW, out: bufio.NewReader(outR)}
	t.Cleanup(func() {
		b.call("", "Browser.close", nil)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		cmdW.Close()
		outR.Close()
	})
	// A browser that stops answering is ended, which fails the call that
	// waits on it instead of hanging the test binary.
	watchdog := time.AfterFunc(10*time.Minute, func() { cmd.Process.Kill() })
	t.Cleanup(func() { watchdog.Stop() })

	var target struct{ TargetID string }
	b.must(t, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct{ SessionID string }
	b.must(t, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	b.session = attached.SessionID
	return b
}

// call sends one command, of the page's session unless session is "" and
// method a browser's, and returns its result.
func (b *browser) call(session, method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.id++
	m := map[string]any{"id": b.id, "method": method, "params": params}
	if session != "" {
		m["sessionId"] = session
	}
	msg, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if _, err := b.in.Write(append(msg, 0)); err != nil {
		return nil, err
	}
	for {
		raw, err := b.out.ReadBytes(0)
		if err != nil {
			return nil, fmt.Errorf("%s: the browser's pipe: %w", method, err)
		}
		var reply struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw[:len(raw)-1], &reply); err != nil {
			return nil, err
		}
		if reply.ID != b.id { // an event, or the answer to a command that gave up
			continue
		}
		if reply.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, reply.Error.Message)
		}
		return reply.Result, nil
	}
}

func (b *browser) must(t *testing.T, session, method string, params, out any) {
	t.Helper()
	res, err := b.call(session, method, params)
	require.NoError(t, err)
	if out != nil {
		require.NoError(t, json.Unmarshal(res, out))
	}
}

// navigate loads url in the page.
func (b *browser) navigate(t *testing.T, url string) {
	t.Helper()
	b.must(t, b.session, "Page.navigate", map[string]any{"url": url}, nil)
}

// await evaluates the JavaScript expression expr in the page every 50ms
// until it yields neither null nor false, and returns that value as JSON,
// waiting at most browserBound. A page that is replaced meanwhile (a
// navigation that commits) is waited on afresh.
func (b *browser) await(t *testing.T, what, expr string) json.RawMessage {
	t.Helper()
	deadline := time.Now().Add(browserBound)
	js := fmt.Sprintf(`new Promise((resolve, reject) => {
  const end = Date.now() + %d;
  const poll = () => {
    let v = null;
    try { v = (%s); } catch (e) { v = null; }
    if (v !== null && v !== false && v !== undefined) return resolve(JSON.stringify(v));
    if (Date.now() > end) return reject(new Error('not yet'));
    setTimeout(poll, 50);
  };
  poll();
})`, browserBound.Milliseconds(), expr)
	for {
		res, err := b.call(b.session, "Runtime.evaluate", map[string]any{"expression": js, "awaitPromise": true, "returnByValue": true})
		var out struct {
			Result struct {
				Value string `json:"value"`
			} `json:"result"`
			Exception *json.RawMessage `json:"exceptionDetails"`
		}
		if err == nil {
			err = json.Unmarshal(res, &out)
		}
		if err == nil && out.Exception == nil {
			return json.RawMessage(out.Result.Value)
		}
		if time.Now().After(deadline) {
			dom, _ := b.call(b.session, "Runtime.evaluate", map[string]any{"expression": "document.documentElement.outerHTML", "returnByValue": true})
			t.Fatalf("the page never showed %s (%v)\nDOM: %s", what, err, dom)
		}
		// The page was replaced, or not yet there: evaluate again.
		time.Sleep(50 * time.Millisecond)
	}
}

// points parses the points of an SVG path's d, "M x y L x y ...".
func points(t *testing.T, d string) [][2]float64 {
	t.Helper()
	var out [][2]float64
	fields := strings.Fields(d)
	for i := 0; i+1 < len(fields); i += 2 {
		x, err := strconv.ParseFloat(strings.TrimLeft(fields[i], "ML"), 64)
		require.NoError(t, err, d)
		y, err := strconv.ParseFloat(fields[i+1], 64)
		require.NoError(t, err, d)
		out = append(out, [2]float64{x, y})
	}
	return out
}

// primJS is a JavaScript function that returns, for a primitive's kind and
// key, its article's state, its figures by name, and its plots' paths, or
// null when the page has no such article yet.
const primJS = `((kind, key) => {
  const a = Array.from(document.querySelectorAll('article.prim')).find(e => e.dataset.kind === kind && e.dataset.key === key);
  if (!a) return null;
  const figures = {};
  a.querySelectorAll('.figures [data-figure]').forEach(f => { figures[f.dataset.figure] = f.querySelector('b').textContent; });
  const paths = Array.from(a.querySelectorAll('svg.plot path:not(.grid)')).map(p => p.getAttribute('d') || '');
  return { state: a.querySelector('.state').textContent, error: a.querySelector('.error').textContent, link: a.querySelector('a').getAttribute('href'), figures, paths };
})`

// A shownPrim is what primJS returns.
type shownPrim struct {
	State   string            `json:"state"`
	Error   string            `json:"error"`
	Link    string            `json:"link"`
	Figures map[string]string `json:"figures"`
	Paths   []string          `json:"paths"`
}

// In headless Chromium, against a real Redis holding one of each
// primitive and a real web, the page shows each one's key and live
// figures; its plot of the limiter's units in use changes when more
// units are taken, once the event that carries them arrives; and each
// primitive's own page shows its detail, with no write button when web
// is read-only.
func TestWebInBrowser(t *testing.T) {
	chromium(t)
	u, client := redisURL(t)
	s := newScene(t, client)
	w := startWeb(t, "-u", u, "web", "-listen", "127.0.0.1:0")
	b := startBrowser(t)
	b.navigate(t, w.url("/"))

	ctx := context.Background()
	// The figures each must show; the limits, the rates and the bounds
	// from the records beside their keys.
	want := map[string]map[string]string{
		kindLimiter:  {"in_use": "2", "limit": "10"},
		kindCounter:  {"in_use": "1", "limit": "3"},
		kindLock:     {"held": "1", "waiting": "1"},
		kindQueue:    {"delayed": "1", "ready": "0", "late_ms": "0"},
		kindRecent:   {"items": "3", "max": "10"},
		kindPacket:   {"shares_left": "9", "shares": "10"},
		kindAdaptive: {"in_use": "1", "limit": "17", "min": "2", "max": "40"},
		kindRate:     {"remaining": "9", "burst": "10", "rate": "10"},
	}
	type prim struct {
		kind, key string
		figures   map[string]string
	}
	var prims []prim
	for kind, key := range s.keys {
		prims = append(prims, prim{kind, key, want[kind]})
	}
	prims = append(prims, prim{kindRate, s.window, map[string]string{"remaining": "3", "burst": "5", "rate": "5"}})
	shown := map[string]shownPrim{} // by key
	for _, pr := range prims {
		kind, key := pr.kind, pr.key
		kj, _ := json.Marshal(kind)
		keyj, _ := json.Marshal(key)
		// Wait for the article, with every figure the test looks for.
		var cond []string
		for fig, v := range pr.figures {
			cond = append(cond, fmt.Sprintf("p.figures[%q] === %q", fig, v))
		}
		cond = append(cond, "p.state !== ''")
		raw := b.await(t, kind+" "+key, fmt.Sprintf("(p => p && %s && p)(%s(%s, %s))", strings.Join(cond, " && "), primJS, kj, keyj))
		var p shownPrim
		require.NoError(t, json.Unmarshal(raw, &p))
		assert.Empty(t, p.Error, kind)
		assert.NotContains(t, p.State, "unreadable", kind)
		assert.Contains(t, p.Link, "/p?", kind)
		shown[key] = p
	}
	assert.Equal(t, "2 of 10 units in use, 0 waiting", shown[s.keys[kindLimiter]].State)
	assert.Equal(t, "1 of 3 units in use", shown[s.keys[kindCounter]].State)
	assert.Regexp(t, `^held by (.+ )?pid \d+, `, shown[s.keys[kindLock]].State, "the lock's owner")
	assert.Equal(t, "fixed window 5/1h0m0s, 3 allowed now", shown[s.window].State)
	assert.Equal(t, `"0"`, string(b.await(t, "no write button or token field", `document.querySelectorAll('button').length === 0 && document.getElementById('token').hidden && '0'`)))

	// More units in use: the plot of units in use rises, once the page has
	// the round that saw them.
	kj, _ := json.Marshal(kindLimiter)
	keyj, _ := json.Marshal(s.keys[kindLimiter])
	before := b.await(t, "the limiter's plot with two points", fmt.Sprintf(`(p => p && p.paths[0].split('L').length >= 3 && p)(%s(%s, %s))`, primJS, kj, keyj))
	var p1 shownPrim
	require.NoError(t, json.Unmarshal(before, &p1))
	_, err := s.limiter.TryAcquireN(ctx, "b", 5)
	require.NoError(t, err)
	after := b.await(t, "the limiter's 7 units in use", fmt.Sprintf(`(p => p && p.figures.in_use === '7' && p)(%s(%s, %s))`, primJS, kj, keyj))
	var p2 shownPrim
	require.NoError(t, json.Unmarshal(after, &p2))
	assert.NotEqual(t, p1.Paths[0], p2.Paths[0], "the plot of units in use changed")
	pts := points(t, p2.Paths[0])
	require.GreaterOrEqual(t, len(pts), 2, p2.Paths[0])
	last, first := pts[len(pts)-1], pts[0]
	assert.Less(t, last[1], first[1], "the line rises (SVG's y grows downwards): %s", p2.Paths[0])
	assert.Greater(t, last[0], first[0], "later points lie to the right: %s", p2.Paths[0])

	// The limiter's own page: its holders, and no write button.
	b.navigate(t, w.url(shown[s.keys[kindLimiter]].Link))
	rows := b.await(t, "the limiter's holders", `(() => {
  const t = document.querySelector('.table[data-title="holders"]');
  if (!t) return null;
  const ids = Array.from(t.querySelectorAll('tr')).slice(1).map(r => r.cells[0].textContent).sort();
  return ids.length === 2 && ids;
})()`)
	assert.JSONEq(t, `["a","b"]`, string(rows))
	assert.Equal(t, `"0"`, string(b.await(t, "no write button", `document.body.dataset.loaded && document.querySelectorAll('button').length === 0 && '0'`)))

	// The red packet's own page: its claim and its persister's lag.
	b.navigate(t, w.url(shown[s.keys[kindPacket]].Link))
	claims := b.await(t, "the packet's claims", `(() => {
  const t = document.querySelector('.table[data-title="claims, in the order taken"]');
  const dd = Array.from(document.querySelectorAll('#summary dt')).find(dt => dt.textContent === 'persister');
  return t && dd && [t.querySelectorAll('tr').length - 1, dd.nextElementSibling.textContent];
})()`)
	var c []any
	require.NoError(t, json.Unmarshal(claims, &c))
	assert.EqualValues(t, 1, c[0], "one claim")
	assert.NotEmpty(t, c[1], "the persister's lag, or that none has read the log")

	// The lock's own page: its owner's description, by default its host
	// and process.
	b.navigate(t, w.url(shown[s.keys[kindLock]].Link))
	var owner string
	require.NoError(t, json.Unmarshal(b.await(t, "the lock's owner", summaryJS("owner")), &owner))
	assert.Regexp(t, `^(.+ )?pid \d+$`, owner)

	// The fixed window's own page: its limit, from its record, and what
	// it allows now.
	b.navigate(t, w.url(shown[s.window].Link))
	var limit, allowed string
	require.NoError(t, json.Unmarshal(b.await(t, "the rate limit's limit", summaryJS("limit")), &limit))
	require.NoError(t, json.Unmarshal(b.await(t, "the rate limit's allowance", summaryJS("allowed now")), &allowed))
	assert.Equal(t, "5 per 1h0m0s (fixed window)", limit)
	assert.Equal(t, "3 events", allowed)
}

// summaryJS returns a JavaScript expression that yields the value of a
// primitive's page's summary line of label, or null before it shows.
func summaryJS(label string) string {
	lj, _ := json.Marshal(label)
	return fmt.Sprintf(`(() => {
  const dt = Array.from(document.querySelectorAll('#summary dt')).find(dt => dt.textContent === %s);
  return dt && dt.nextElementSibling.textContent;
})()`, lj)
}

// With -allow-writes, a primitive's own page offers its writes, and a
// write made there with the token from the address's fragment is done.
func TestWebInBrowserWrites(t *testing.T) {
	chromium(t)
	u, client := redisURL(t)
	s := newScene(t, client)
	w := startWeb(t, "-u", u, "web", "-listen", "127.0.0.1:0", "-allow-writes")
	b := startBrowser(t)
	link := "/p?kind=limiter&key=" + url.QueryEscape(s.keys[kindLimiter])
	b.navigate(t, w.url(link+"#token="+w.token))
	b.await(t, "a force-release button", `document.querySelector('button.write[data-action="release"]') && 'ok'`)
	// The fragment was taken off the address, and the token kept.
	assert.Equal(t, `"ok"`, string(b.await(t, "the token kept, off the address", `location.hash === '' && sessionStorage.getItem('slotlimit-write-token') !== null && 'ok'`)))
	// confirm() answers true, in this page only.
	b.await(t, "confirm answered", `(window.confirm = () => true) && 'ok'`)
	b.await(t, "the click", `(document.querySelector('button.write[data-action="release"]').click(), 'ok')`)
	b.await(t, "the write's answer", `(() => { const r = document.getElementById('result'); return !r.hidden && r.textContent.startsWith('released') && 'ok'; })()`)
	n, err := s.limiter.Count(context.Background())
	require.NoError(t, err)
	assert.Zero(t, n, "the holder was released")
}
