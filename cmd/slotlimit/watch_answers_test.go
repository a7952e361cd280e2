package main_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// watch and adaptive watch agree on a key that holds a value of another
// type: each screen explains it in the words the commands print, the
// next screen reads again, and the last one being such is the answer no,
// exit code 1; with -json each such screen is {"screen", "error"} with
// the words. Nothing goes to stderr.
func TestLiveViewsExplainWrongType(t *testing.T) {
	url, client := server(t)
	ctx := context.Background()
	list := testKey(t, "cli-test:list:")
	require.NoError(t, client.RPush(ctx, list, "x").Err())
	adaptiveKey := testKey(t, "cli-test:adaptive:")
	side := "{" + adaptiveKey + "}/adaptive"
	require.NoError(t, client.Set(ctx, side, "mine", time.Hour).Err())
	t.Cleanup(func() { client.Del(context.Background(), list, side) })

	for _, step := range []struct {
		live, show []string // the live view, and the command whose words it shows
	}{
		{[]string{"watch", list}, []string{"count", list}},
		{[]string{"adaptive", "watch", adaptiveKey}, []string{"adaptive", "show", adaptiveKey}},
	} {
		show := cli(t, "", nil, append([]string{"-u", url}, step.show...)...)
		require.Equal(t, 1, show.code, "%q", step.show)
		words := strings.TrimSpace(show.stderr)
		require.NotEmpty(t, words)

		live := append([]string{"-u", url}, step.live...)
		r := cli(t, "", nil, append(live, "-n", "2", "-interval", "10ms")...)
		assert.Equal(t, 1, r.code, "%q: the answer no", step.live)
		assert.Equal(t, 2, strings.Count(r.stdout, "\n  "+words+"\n"), "%q: the words on each screen: %s", step.live, r.stdout)
		assert.Equal(t, 2, strings.Count(r.stdout, "(reading again every 10ms; Ctrl-C quits)"), "%q", step.live)
		assert.NotContains(t, r.stdout, "error:", "%q", step.live)
		assert.NotContains(t, r.stdout, "script", "%q: no script hash or line", step.live)
		assert.Empty(t, r.stderr, "%q", step.live)

		js := cli(t, "", nil, append(live, "-json", "-n", "1")...)
		assert.Equal(t, 1, js.code, "%q -json", step.live)
		var line struct {
			Screen int    `json:"screen"`
			Error  string `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(js.stdout), &line), js.stdout)
		assert.Equal(t, 1, line.Screen)
		assert.Equal(t, words, line.Error, "%q -json", step.live)
	}
}

// A live view whose last screen failed for another reason than the key's
// type still exits 3, its error on the screen.
func TestLiveViewFailureStillExits3(t *testing.T) {
	r := cli(t, "", nil, "-u", closedURL(t), "-timeout", "200ms", "watch", "-n", "1", "k")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stdout, "error: ")
	assert.Contains(t, r.stdout, "(trying again every 1s; Ctrl-C quits)")
}
