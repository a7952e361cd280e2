package main_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/loopback"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// The tests run the command as its users do: a binary, built once here,
// run as a process against a real redis-server that the tests start.

// bin is the command's binary.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "slotlimit-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "slotlimit")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	redistest.Shutdown()
	os.RemoveAll(dir)
	os.Exit(code)
}

// A run is the outcome of one run of the command.
type run struct {
	stdout, stderr string
	code           int
}

// cli runs the command with args and stdin, without REDIS_URL
// unless env sets it, and returns what it printed and its exit code.
func cli(t *testing.T, stdin string, env []string, args ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REDIS_URL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := run{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("slotlimit %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("slotlimit %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	return r
}

// server returns the URL of the tests' real Redis and a client of it.
func server(t *testing.T) (string, *redis.Client) {
	t.Helper()
	addr := redistest.Addr(t)
	client := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { client.Close() })
	return "redis://" + addr, client
}

// eachServer runs test against a miniredis and against the tests' real
// Redis, each as a subtest named after it, with the URL the command is
// given and a Backend whose client sets up the state through the library.
func eachServer(t *testing.T, test func(t *testing.T, url string, b *redistest.Backend)) {
	for _, backend := range []struct {
		name string
		make func(*testing.T) *redistest.Backend
	}{{"miniredis", redistest.Miniredis}, {"redis", redistest.Redis}} {
		t.Run(backend.name, func(t *testing.T) {
			b := backend.make(t)
			test(t, "redis://"+b.Opts.Addrs[0], b)
		})
	}
}

// testKey returns a key of the test's own.
func testKey(t *testing.T, prefix string) string {
	var b [6]byte
	rand.Read(b[:])
	return prefix + t.Name() + ":" + hex.EncodeToString(b[:])
}

// closedURL returns the URL of a loopback port that nothing listens on.
func closedURL(t *testing.T) string {
	addr, err := loopback.FreeAddr()
	require.NoError(t, err)
	return "redis://" + addr
}

func TestHelpListsCommandsAndExitCodes(t *testing.T) {
	r := cli(t, "", nil, "-h")
	assert.Equal(t, 0, r.code)
	for _, s := range []string{"count KEY", "holders KEY", "release KEY HOLDER", "watch KEY", "lock info KEY", "lock break KEY",
		"queue stats KEY", "queue dead KEY", "queue requeue KEY ID...", "queue drop KEY ID...", "recent list KEY",
		"recent remove KEY VALUE...", "packet show ID", "rate show KEY", "rate reset KEY", "adaptive show KEY", "adaptive watch KEY",
		"Exit status", "fence floor", "or localhost:6379 when it is not set"} {
		assert.Contains(t, r.stdout, s)
	}
	r = cli(t, "", []string{"REDIS_URL=redis://user:secret@127.0.0.1:1"}, "holders", "-h")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "-limit N")
	assert.NotContains(t, r.stdout, "secret", "the URL may hold a password")
}

// Bad usage exits with code 2, says what was wrong on stderr and prints
// nothing on stdout.
func TestBadUsageExits2(t *testing.T) {
	url, _ := server(t)
	for i, args := range [][]string{
		{},
		{"-u", url},
		{"-u", url, "bogus", "k"},
		{"-u", url, "count"},
		{"-u", url, "count", "a", "b"},
		{"-u", url, "release", "k"},
		{"-u", url, "holders", "-bogus", "k"},
		{"-bogus", "-u", url, "holders", "k"},
		{"-u", "http://127.0.0.1:6379", "count", "k"},
		{"-u", url, "count", "a}b"},     // a key New refuses
		{"-u", url, "release", "k", ""}, // a holder the library refuses
		{"-u", url, "holders", "-limit", "-3", "k"},
		{"-u", url, "lock"},
		{"-u", url, "lock", "bogus", "k"},
		{"-u", url, "lock", "info"},
		{"-u", url, "watch", "-n", "-1", "k"},
		{"-u", url, "-timeout", "0s", "count", "k"},
		{"-u", url, "count", "k", "-limit"}, // a flag with no value
		{"-u", url, "release", "k", "-h1"},  // an ID that begins with '-', before --
		{"-u", url, "queue"},
		{"-u", url, "queue", "stats"},
		{"-u", url, "queue", "dead", "-n", "0", "k"},
		{"-u", url, "queue", "dead", "-n", "1001", "k"},
		{"-u", url, "queue", "requeue", "k"},
		{"-u", url, "queue", "drop", "k"},
		{"-u", url, "queue", "stats", "a}b"},
		{"-u", url, "recent", "list"},
		{"-u", url, "recent", "list", "-n", "-1", "k"},
		{"-u", url, "recent", "remove", "k"},
		{"-u", url, "packet", "show"},
		{"-u", url, "packet", "show", "-prefix", "{x}", "p1"},
		{"-u", url, "packet", "show", "-shards", "2000", "p1"},
		{"-u", url, "rate", "show", "{k}/ratelimit"}, // a key the package keeps beside another
		{"-u", url, "rate", "show", "-rate", "-1", "k"},
		{"-u", url, "adaptive"},
		{"-u", url, "adaptive", "show"},
		{"-u", url, "adaptive", "show", "a}b"},          // a key New refuses
		{"-u", url, "adaptive", "show", "{k}/adaptive"}, // a key the package keeps beside another
		{"-u", url, "adaptive", "show", "-min", "-1", "k"},
		{"-u", url, "adaptive", "show", "-min", "5", "-max", "3", "k"},
		{"-u", url, "adaptive", "show", "-max", "67108864", "k"}, // 2^26
		{"-u", url, "adaptive", "watch", "-n", "-1", "k"},
		{"-u", url, "adaptive", "watch", "-interval", "1ms", "k"},
	} {
		r := cli(t, "", nil, args...)
		assert.Equal(t, 2, r.code, "step %d: %q", i, args)
		assert.Empty(t, r.stdout, "step %d", i)
		assert.NotEmpty(t, r.stderr, "step %d", i)
	}
}

// A Redis that cannot be reached, or that answers with an error, exits
// with code 3.
func TestRedisErrorsExit3(t *testing.T) {
	down := closedURL(t)
	for i, args := range [][]string{
		{"-u", down, "count", "k"},
		{"-u", down, "holders", "-json", "k"},
		{"-u", down, "release", "k", "h"},
		{"-u", down, "watch", "-n", "1", "k"},
		{"-u", down, "lock", "info", "k"},
		{"-u", down, "lock", "break", "-yes", "k"},
		{"-u", down, "queue", "stats", "k"},
		{"-u", down, "recent", "list", "k"},
		{"-u", down, "packet", "show", "p1"},
		{"-u", down, "rate", "show", "-rate", "5", "k"},
		{"-u", down, "adaptive", "show", "k"},
		{"-u", down, "adaptive", "watch", "-n", "1", "k"},
		{"-timeout", "200ms", "-u", "redis://192.0.2.1:6379", "count", "k"}, // TEST-NET-1: nothing answers
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel() // each waits out the client's dial retries
			start := time.Now()
			r := cli(t, "", nil, args...)
			assert.Equal(t, 3, r.code, "%q", args)
			assert.Contains(t, r.stderr, "slotlimit ")
			assert.Equal(t, 1, strings.Count(r.stderr, "slotlimit"), "the command is named once: %q", r.stderr)
			assert.Less(t, time.Since(start), 15*time.Second)
		})
	}

	url, client := server(t)
	ctx := context.Background()
	key := testKey(t, "cli-test:")
	require.NoError(t, client.Set(ctx, key, "a string", time.Minute).Err())
	// A limiter's commands explain a key of another type in words
	// (TestLimiterCommandsExplainWrongType).
	for i, args := range [][]string{
		{"-u", url, "lock", "info", "-json", key + ":nolock"},
	} {
		if i == 0 {
			require.NoError(t, client.HSet(ctx, key+":nolock", "f", "v").Err())
		}
		r := cli(t, "", nil, args...)
		assert.Equal(t, 3, r.code, "step %d: %q", i, args)
		assert.Contains(t, r.stderr, "WRONGTYPE", "step %d", i)
	}
	client.Del(ctx, key, key+":nolock")
}

// An error names the command that failed and each package once: a key the
// library refuses, a Redis error, and a lock's error.
func TestErrorsNameTheCommandOnce(t *testing.T) {
	url, client := server(t)
	ctx := context.Background()
	key := testKey(t, "cli-test:")
	require.NoError(t, client.Set(ctx, key, "a string", time.Minute).Err())
	require.NoError(t, client.HSet(ctx, key+":nolock", "f", "v").Err())
	defer client.Del(ctx, key, key+":nolock")
	for i, step := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-u", url, "release", "a}b", "h"}, 2, "slotlimit release: invalid config: "},
		{[]string{"-u", url, "holders", "a}b"}, 2, "slotlimit holders: invalid config: "},
		{[]string{"-u", url, "lock", "info", key + ":nolock"}, 3, "slotlimit lock info: lock: "},
		{[]string{"-u", url, "nosuch"}, 2, "slotlimit: unknown command"},
	} {
		r := cli(t, "", nil, step.args...)
		assert.Equal(t, step.code, r.code, "step %d", i)
		first, _, _ := strings.Cut(r.stderr, "\n")
		assert.True(t, strings.HasPrefix(first, step.want), "step %d: %q, want it to begin %q", i, first, step.want)
		assert.Equal(t, 1, strings.Count(first, "slotlimit"), "step %d: %q names slotlimit once", i, first)
		assert.LessOrEqual(t, strings.Count(first, "lock:"), 1, "step %d: %q", i, first)
	}
}

// jsonInts decodes the JSON object in s and returns the fields named,
// failing unless each is there and is a JSON number holding an integer.
func jsonInts(t *testing.T, s string, fields ...string) map[string]int64 {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var obj map[string]any
	require.NoError(t, dec.Decode(&obj), "a JSON object: %q", s)
	out := map[string]int64{}
	for _, f := range fields {
		v, ok := obj[f]
		require.True(t, ok, "field %q is missing from %s", f, s)
		n, ok := v.(json.Number)
		require.True(t, ok, "field %q is %T, not a number, in %s", f, v, s)
		i, err := n.Int64()
		require.NoError(t, err, "field %q is %s, not an integer", f, n)
		out[f] = i
	}
	return out
}

// A URL without a scheme, as host:port, is taken as redis://host:port,
// from -u and from REDIS_URL.
func TestHostPortURL(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		addr := strings.TrimPrefix(url, "redis://")
		key := testKey(t, "cli-test:")
		l, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 3, TTL: time.Minute})
		require.NoError(t, err)
		_, err = l.TryAcquire(context.Background(), "a")
		require.NoError(t, err)
		for _, r := range []run{
			cli(t, "", nil, "-u", addr, "count", "-limit", "3", key),
			cli(t, "", []string{"REDIS_URL=" + addr}, "count", "-limit", "3", key),
		} {
			assert.Equal(t, 0, r.code)
			assert.Equal(t, "1 of 3 units in use\n", r.stdout)
			assert.Empty(t, r.stderr)
		}
		r := cli(t, "", nil, "-u", "user:secret@"+addr, "count", key)
		assert.Equal(t, 3, r.code, "parsed as a URL with a password, which the server refuses")
		assert.NotContains(t, r.stderr, "parse", "not a URL parse error")
	})
}

// Flags go anywhere after the command's name: before, between or after
// its arguments. After "--" every word is an argument, so an ID that
// begins with '-' can be given; without "--" it is refused with a hint.
func TestFlagsAfterArguments(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		key := testKey(t, "cli-test:")
		l, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 5, TTL: time.Minute})
		require.NoError(t, err)
		for _, h := range []string{"-odd", "even"} {
			_, err = l.TryAcquire(ctx, h)
			require.NoError(t, err)
		}
		for _, args := range [][]string{
			{"holders", key, "-json", "-u", url, "-limit", "5"},
			{"-u", url, "holders", key, "-limit", "5", "-json"},
			{"holders", "-limit=5", key, "-json", "-u=" + url},
		} {
			r := cli(t, "", nil, args...)
			require.Equal(t, 0, r.code, "%q", args)
			got := jsonInts(t, r.stdout, "in_use", "limit", "holder_count")
			assert.Equal(t, map[string]int64{"in_use": 2, "limit": 5, "holder_count": 2}, got, "%q", args)
		}

		r := cli(t, "", nil, "-u", url, "release", key, "-odd", "-limit", "5")
		assert.Equal(t, 2, r.code, "-odd is taken for a flag")
		assert.Contains(t, r.stderr, "goes after --")
		assert.Empty(t, r.stdout)

		r = cli(t, "", nil, "-u", url, "release", "-limit", "5", key, "--", "-odd")
		require.Equal(t, 0, r.code)
		assert.Equal(t, "released -odd on "+key+" (1 unit)\nnow 1 of 5 units in use; 0 waiting\n", r.stdout)
		r = cli(t, "", nil, "-u", url, "release", key, "-json", "--", "-odd")
		assert.Equal(t, 1, r.code, "held nothing now")
		hs, err := l.Holders(ctx)
		require.NoError(t, err)
		require.Len(t, hs, 1)
		assert.Equal(t, "even", hs[0].ID)
	})
}
