package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A terminal is a tmux server of the test's own, on a socket in the
// test's temporary directory, with one window 100 columns wide and 30 rows
// high, where a command runs as on a screen.
type terminal struct {
	t      *testing.T
	socket string
}

func newTerminal(t *testing.T, command ...string) *terminal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv(redistest.RequireEnv) == "1" {
			t.Fatalf("tmux is not on PATH, and %s=1 requires the screen test", redistest.RequireEnv)
		}
		t.Skip("skipping the screen test: tmux is not on PATH (apt-get install tmux)")
	}
	term := &terminal{t: t, socket: filepath.Join(t.TempDir(), "tmux")}
	quoted := make([]string, len(command))
	for i, arg := range command {
		quoted[i] = "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
	}
	term.tmux("new-session", "-d", "-s", "watch", "-x", "100", "-y", "30", strings.Join(quoted, " ")+"; sleep 60")
	t.Cleanup(func() { exec.Command("tmux", "-S", term.socket, "kill-server").Run() })
	return term
}

func (term *terminal) tmux(args ...string) string {
	term.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", term.socket, "-f", "/dev/null"}, args...)...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "LANG=C.UTF-8")
	out, err := cmd.CombinedOutput()
	require.NoError(term.t, err, "tmux %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// screen returns what the window shows.
func (term *terminal) screen() string {
	return term.tmux("capture-pane", "-p", "-t", "watch")
}

// waitFor returns the screen once it matches re, or fails.
func (term *terminal) waitFor(re string) string {
	term.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := term.screen()
		if regexp.MustCompile(re).MatchString(s) {
			return s
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("the screen never matched %s; it shows:\n%s", re, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// watch shows, as a user sees it in a terminal, the key, the units in use
// against the limit, the holders with their time left, the queue and the
// refusals, and redraws them each second.
func TestWatchScreen(t *testing.T) {
	s := newScene(t)
	term := newTerminal(t, bin, "-u", s.url, "watch", "-n", "30", s.key)
	screen := term.waitFor(`screen 2 of 30`)
	t.Logf("the screen:\n%s", screen)
	lines := strings.Split(screen, "\n")
	assert.Equal(t, "slotlimit watch  "+s.key, strings.TrimRight(lines[0], " "))
	assert.Regexp(t, `(?m)^redis 127\.0\.0\.1:\d+ +server clock 20\d\d-\d\d-\d\d \d\d:\d\d:\d\d UTC +every 1s +screen 2 of 30$`, screen)
	assert.Regexp(t, `(?m)^  in use +4 / 5 units +\[#{32}\.{8}\] +80%$`, screen)
	assert.Regexp(t, `(?m)^  holders +2$`, screen)
	assert.Regexp(t, `(?m)^  queue +1 waiting: waiter-2 \(2 units\)$`, screen)
	assert.Regexp(t, `(?m)^  refusals +1, \+0\.0/s ¹$`, screen)
	assert.Regexp(t, `(?m)^  HOLDER +UNITS +TIME LEFT$`, screen)
	assert.Regexp(t, `(?m)^  batch-7 +3 +(5\d(\.\d)?|1m0)s$`, screen)
	assert.Regexp(t, `(?m)^  device-1 +1 +(5\d(\.\d)?|1m0)s$`, screen)
	assert.Regexp(t, `(?m)^¹ calls refused without waiting`, screen)
	assert.LessOrEqual(t, len(strings.Split(strings.TrimRight(screen, "\n "), "\n")), 30, "it fits the window")

	// A refusal and a release show on the next screens.
	res, err := s.l.TryAcquireN(context.Background(), "refused-9", 2)
	require.NoError(t, err)
	require.False(t, res.Acquired)
	err = s.l.Release(context.Background(), "batch-7")
	require.NoError(t, err)
	screen = term.waitFor(`(?m)^  in use +3 / 5 units`)
	assert.Regexp(t, `(?m)^  refusals +2, \+[0-9.]+/s ¹$`, screen)
	assert.Regexp(t, `(?m)^  queue +0 waiting$`, screen)
	assert.Regexp(t, `(?m)^  waiter-2 +2 +`, screen)
	assert.NotContains(t, screen, "batch-7")
}

// watch -n ends after that many screens; -json writes one line of JSON for
// each.
func TestWatchJSONLines(t *testing.T) {
	s := newScene(t)
	start := time.Now()
	r := cli(t, "", nil, "-u", s.url, "watch", "-json", "-n", "3", "-interval", "100ms", s.key)
	require.Equal(t, 0, r.code)
	assert.Less(t, time.Since(start), 10*time.Second)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 3)
	for i, line := range lines {
		var screen struct {
			Screen      int    `json:"screen"`
			Key         string `json:"key"`
			InUse       int64  `json:"in_use"`
			Limit       int64  `json:"limit"`
			QueueLength int    `json:"queue_length"`
			Refusals    int64  `json:"refusals"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &screen), "line %d", i)
		assert.Equal(t, i+1, screen.Screen)
		assert.Equal(t, s.key, screen.Key)
		assert.Equal(t, int64(4), screen.InUse)
		assert.Equal(t, int64(5), screen.Limit)
		assert.Equal(t, 1, screen.QueueLength)
		assert.Equal(t, int64(1), screen.Refusals)
	}
}

// watch into a pipe writes no terminal codes: each screen in plain lines,
// after an empty line, one after another.
func TestWatchIntoPipe(t *testing.T) {
	s := newScene(t)
	r := cli(t, "", nil, "-u", s.url, "watch", "-n", "3", "-interval", "100ms", s.key)
	require.Equal(t, 0, r.code)
	assert.NotContains(t, r.stdout, "\x1b", "no terminal codes")
	screens := strings.Split(r.stdout, "\n\nslotlimit watch  ")
	require.Len(t, screens, 3, "three screens, each after an empty line")
	assert.True(t, strings.HasPrefix(screens[0], "slotlimit watch  "+s.key+"\n"))
	for i, screen := range screens {
		assert.Regexp(t, `(?m)^redis 127\.0\.0\.1:\d+ +server clock .* UTC +every 100ms +screen `+strconv.Itoa(i+1)+` of 3$`, screen)
		assert.Regexp(t, `(?m)^  in use +4 / 5 units +\[#{32}\.{8}\] +80%$`, screen)
		assert.Regexp(t, `(?m)^  batch-7 +3 +`, screen)
		assert.NotRegexp(t, `(?m) $`, screen, "no trailing spaces")
	}
	assert.True(t, strings.HasSuffix(r.stdout, "Ctrl-C quits.\n"), "ends with the last screen's last line")
}

// For a key with no limit recorded (as one last used by a release that
// kept none), watch looks for the limit on a screen whose units in use are
// the most it has seen, since the limit is found while the key is full,
// and keeps it once found: it shows the limit as soon as the key has been
// full.
func TestWatchFindsLimitWhenFull(t *testing.T) {
	url, client := server(t)
	ctx := context.Background()
	key := testKey(t, "cli-test:")
	l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: 3, TTL: time.Minute})
	require.NoError(t, err)
	_, err = l.TryAcquire(ctx, "a")
	require.NoError(t, err)
	// The Limiter writes its record again only a minute after.
	require.NoError(t, client.Del(ctx, "{"+key+"}/limit").Err())
	t.Cleanup(func() {
		for _, h := range []string{"a", "b", "c"} {
			l.Release(context.Background(), h) //nolint:errcheck // the leases lapse anyway
		}
	})

	cmd := exec.Command(bin, "-u", url, "watch", "-json", "-n", "3", "-interval", "500ms", key)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) //nolint:errcheck // it may have ended
	lines := bufio.NewScanner(out)
	limit := func() *int64 {
		t.Helper()
		require.True(t, lines.Scan(), "a screen")
		var screen struct {
			Limit *int64 `json:"limit"`
			InUse int64  `json:"in_use"`
		}
		require.NoError(t, json.Unmarshal(lines.Bytes(), &screen))
		return screen.Limit
	}
	assert.Nil(t, limit(), "1 of 3 in use: no record, no marker, no waiter")
	for _, h := range []string{"b", "c"} {
		_, err := l.TryAcquire(ctx, h)
		require.NoError(t, err)
	}
	got := limit()
	require.NotNil(t, got, "full on screen 2, the most in use yet")
	assert.Equal(t, int64(3), *got)
	require.NoError(t, l.Release(ctx, "c"))
	got = limit()
	require.NotNil(t, got, "kept once found")
	assert.Equal(t, int64(3), *got)
}
