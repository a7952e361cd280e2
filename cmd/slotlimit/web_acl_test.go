package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// webPrim is a primitive in web's /api/state.
type webPrim struct {
	Kind   string `json:"kind"`
	Key    string `json:"key"`
	Prefix string `json:"prefix"`
	Shard  int    `json:"shard"`
	State  string `json:"state"`
	Error  string `json:"error"`
}

// The read-only operator of docs/security.md runs slotlimit web, the
// binary, without -allow-writes: the page reads every primitive and its
// detail, the server denies it nothing, nothing in Redis changes, and
// SIGINT ends it with exit 0.
func TestReaderACLRunsWeb(t *testing.T) {
	admin, redisURL := readerServer(t, aclReader)
	s := newReaderScene(t, admin)
	s.stopWaiter() // a waiter would write; the page must not
	before := dump(t, admin)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-u", redisURL, "web", "-listen", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan(), "web printed nothing: %s", stderr.String())
	addr, ok := strings.CutPrefix(lines.Text(), "listening on http://")
	require.True(t, ok, lines.Text())
	go func() {
		for lines.Scan() {
		}
	}()

	// Wait for a round that read every primitive of the scene.
	want := map[[2]string]bool{{"limiter", s.limiter}: true, {"counter", s.counter}: true, {"lock", s.lock}: true,
		{"delay queue", s.queue}: true, {"recent list", s.list}: true, {"red packet", s.packet}: true,
		{"adaptive limit", s.adaptive}: true, {"rate limit", s.gcra}: true, {"rate limit", s.window}: true}
	var prims []webPrim
	for deadline := time.Now().Add(time.Minute); ; {
		res, err := http.Get("http://" + addr + "/api/state")
		require.NoError(t, err)
		var st struct {
			Seq   int       `json:"seq"`
			Prims []webPrim `json:"prims"`
		}
		require.NoError(t, json.NewDecoder(res.Body).Decode(&st))
		res.Body.Close()
		n := 0
		for _, p := range st.Prims {
			if want[[2]string{p.Kind, p.Key}] && p.State != "" {
				n++
			}
		}
		if n == len(want) {
			prims = st.Prims
			break
		}
		require.True(t, time.Now().Before(deadline), "web never read the scene: %+v", st.Prims)
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range prims {
		if !want[[2]string{p.Kind, p.Key}] {
			continue
		}
		assert.Empty(t, p.Error, "%s %s", p.Kind, p.Key)
		assert.NotContains(t, p.State, "unknown", "%s %s: every limit, rate and bound is read", p.Kind, p.Key)
		q := url.Values{"kind": {p.Kind}, "key": {p.Key}}
		if p.Prefix != "" {
			q.Set("prefix", p.Prefix)
			q.Set("shard", strconv.Itoa(p.Shard))
		}
		res, err := http.Get("http://" + addr + "/api/detail?" + q.Encode())
		require.NoError(t, err)
		var d struct {
			Error   string      `json:"error"`
			Summary [][2]string `json:"summary"`
		}
		require.NoError(t, json.NewDecoder(res.Body).Decode(&d))
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", p.Kind, d.Error)
		assert.NotEmpty(t, d.Summary, p.Kind)
		for _, line := range d.Summary {
			assert.NotContains(t, line[1], "unknown", "%s %s: %s", p.Kind, p.Key, line[0])
		}
	}
	assert.Empty(t, denials(t, admin), "ACL LOG after the page's reads")
	assert.Equal(t, before, dump(t, admin), "the page changed nothing")

	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err = cmd.Wait()
	assert.NoError(t, err, "web exits 0 on SIGINT; stderr: %s", stderr.String())
}
