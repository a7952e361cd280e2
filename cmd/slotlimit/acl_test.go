package main_test

import (
	"context"
	"crypto/rand"
	"os"
	"slices"
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

// The read-only operator's ACL lines of docs/security.md, word for word
// (TestReaderACLLinesInDocs holds the two together). The tests run them
// with a password in place of PASSWORD, on a server or a Cluster of their
// own, with keys that begin "app:".
const (
	aclReader = "ACL SETUSER slotlimit-reader reset on >PASSWORD ~app:* ~{app:* " +
		"+scan +type +get +evalsha +eval +time " +
		"+hget +hmget +hgetall +hvals +pttl +zcard +zcount +zrange +zrangebyscore +zrevrangebyscore +zscore +xinfo|groups"

	// aclReaderSince72 and aclReaderCluster are added to it as to the
	// library's lines.
	aclReaderSince72  = " +client|setinfo"
	aclReaderCluster  = " +cluster|slots +command"
	aclReaderUserName = "slotlimit-reader"
)

func TestReaderACLLinesInDocs(t *testing.T) {
	data, err := os.ReadFile("../../docs/security.md")
	require.NoError(t, err)
	assert.Contains(t, string(data), "\n"+aclReader+"\n", "docs/security.md must hold the reader's line word for word, on a line of its own")
	assert.Contains(t, string(data), "`"+strings.TrimSpace(aclReaderCluster)+"`")
}

// readerServer starts a redis-server of the test's own with the reader
// user, and returns the default user's client, with which the test makes
// the primitives, and the reader's URL.
func readerServer(t *testing.T, line string) (admin *redis.Client, readerURL string) {
	t.Helper()
	srv, err := redistest.Start()
	if err != nil {
		redistest.Unavailable(t, err)
	}
	t.Cleanup(srv.Close)
	admin = redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { admin.Close() })
	password := rand.Text()
	setReader(t, admin, line, password)
	require.NoError(t, admin.ACLLogReset(context.Background()).Err())
	return admin, "redis://" + aclReaderUserName + ":" + password + "@" + srv.Addr
}

// setReader runs line on client's node, with password in place of
// PASSWORD, and aclReaderSince72 added on a server that knows CLIENT
// SETINFO.
func setReader(t *testing.T, client *redis.Client, line, password string) {
	t.Helper()
	ctx := context.Background()
	if client.Do(ctx, "CLIENT", "SETINFO", "LIB-NAME", "x").Err() == nil {
		line += aclReaderSince72
	}
	var args []any
	for _, w := range strings.Fields(strings.Replace(line, ">PASSWORD", ">"+password, 1)) {
		args = append(args, w)
	}
	require.NoError(t, client.Do(ctx, args...).Err(), "the reader's ACL line, as docs/security.md gives it")
}

// readerScene is one of each primitive under "app:", with a Limiter's
// holder and a lock's owner for the writes to try to remove, and a
// Limiter's waiter until stopWaiter. The lock has no waiter, so that ls
// finds it by its owner's record; the fixed window is found by its rate
// record alone.
type readerScene struct {
	limiter, counter, lock, queue, list, packet, adaptive, gcra, window string
	tag, lockToken                                                      string
	stopWaiter                                                          func()
}

// keys returns the keys ls lists for the scene, one of each primitive.
func (s *readerScene) keys() []string {
	return []string{s.limiter, s.counter, s.lock, s.queue, s.list, s.packet, s.adaptive, s.gcra, s.window}
}

func newReaderScene(t *testing.T, client redis.UniversalClient) *readerScene {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tag := rand.Text()[:8]
	s := &readerScene{tag: tag, limiter: "app:lim:" + tag, counter: "app:ctr:" + tag, lock: "app:lock:" + tag, queue: "app:queue:" + tag,
		list: "app:recent:" + tag, packet: "p" + tag, adaptive: "app:adaptive:" + tag, gcra: "app:gcra:" + tag, window: "app:window:" + tag}
	l, err := slotlimit.New(client, slotlimit.Config{Key: s.limiter, Limit: 5, TTL: time.Hour})
	require.NoError(t, err)
	_, err = l.TryAcquireN(ctx, "h1", 2)
	require.NoError(t, err)
	waitCtx, cancelWait := context.WithCancel(context.Background())
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		l.AcquireN(waitCtx, "w1", 4)
	}()
	s.stopWaiter = func() { cancelWait(); <-waited }
	t.Cleanup(s.stopWaiter)
	require.Eventually(t, func() bool {
		snap, err := l.Inspect(ctx)
		return err == nil && len(snap.Queue) == 1
	}, 15*time.Second, 10*time.Millisecond, "the waiter queues")
	c, err := slotlimit.NewCounter(client, slotlimit.Config{Key: s.counter, Limit: 3, TTL: time.Hour})
	require.NoError(t, err)
	_, err = c.TryAcquire(ctx)
	require.NoError(t, err)
	m, err := lock.New(client, lock.Config{Key: s.lock, TTL: time.Hour})
	require.NoError(t, err)
	lk, err := m.TryLock(ctx)
	require.NoError(t, err)
	s.lockToken = lk.Token()
	q, err := delayqueue.New(client, delayqueue.Config{Key: s.queue})
	require.NoError(t, err)
	_, err = q.Push(ctx, []byte("later"), time.Hour)
	require.NoError(t, err)
	list, err := recent.New(client, recent.Config{Key: s.list, Max: 10})
	require.NoError(t, err)
	require.NoError(t, list.Add(ctx, "x"))
	store, err := redpacket.New(client, redpacket.Config{Prefix: "app:rp"})
	require.NoError(t, err)
	require.NoError(t, store.Create(ctx, redpacket.Packet{ID: s.packet, Total: 100, Count: 4}))
	_, err = store.Grab(ctx, s.packet, "u1")
	require.NoError(t, err)
	a, err := adaptive.New(client, adaptive.Config{Key: s.adaptive, Min: 1, Max: 10, Initial: 5, TTL: time.Hour})
	require.NoError(t, err)
	_, err = a.TryAcquire(ctx)
	require.NoError(t, err)
	rl, err := ratelimit.New(client, ratelimit.Config{})
	require.NoError(t, err)
	_, err = rl.Allow(ctx, s.gcra, ratelimit.Limit{Rate: 10, Period: time.Hour})
	require.NoError(t, err)
	_, err = rl.Allow(ctx, s.window, ratelimit.Limit{Algorithm: ratelimit.FixedWindow, Rate: 10, Period: time.Hour})
	require.NoError(t, err)
	return s
}

// readerReads runs, as the reader, every command that only reads, and
// returns the runs that did not exit 0.
func readerReads(t *testing.T, url string, s *readerScene, conn ...string) []string {
	t.Helper()
	var failed []string
	for _, args := range [][]string{
		{"ls"},
		{"ls", "-json", "-kind", "limiter"},
		{"count", s.limiter},
		{"holders", s.limiter},
		{"watch", "-n", "1", s.limiter},
		{"lock", "info", s.lock},
		{"queue", "stats", s.queue},
		{"queue", "list", s.queue},
		{"queue", "dead", s.queue},
		{"recent", "list", s.list},
		{"packet", "show", "-prefix", "app:rp", s.packet},
		{"rate", "show", s.gcra},
		{"rate", "show", s.window},
		{"adaptive", "show", s.adaptive},
	} {
		r := cli(t, "", nil, append(append([]string{"-u", url}, conn...), args...)...)
		if r.code != 0 || strings.Contains(r.stdout, "unreadable") {
			failed = append(failed, strings.Join(args, " ")+": "+r.stdout+r.stderr)
		}
	}
	return failed
}

// A read-only operator with the reader's line runs ls and every command
// that reads, and the server denies it nothing; a write (release, lock
// break) is refused and changes nothing.
func TestReaderACL(t *testing.T) {
	admin, url := readerServer(t, aclReader)
	s := newReaderScene(t, admin)
	ctx := context.Background()

	assert.Empty(t, readerReads(t, url, s))
	r := cli(t, "", nil, "-u", url, "ls")
	require.Equal(t, 0, r.code)
	for _, key := range s.keys() {
		assert.Contains(t, r.stdout, key)
	}
	assert.Equal(t, len(s.keys())+1, strings.Count(r.stdout, "\n"), "a header, and a row for each: %s", r.stdout)
	assert.NotContains(t, r.stdout, "unreadable")
	assert.NotContains(t, r.stdout, "unknown", "every limit, rate and bound is read")

	// The persister's lag, as slotlimit web reads it.
	opts, err := redis.ParseURL(url)
	require.NoError(t, err)
	reader := redis.NewClient(opts)
	defer reader.Close()
	err = reader.XInfoGroups(ctx, "{app:rp:0}:redpacket:log").Err()
	assert.True(t, err == nil || strings.Contains(err.Error(), "no such key"), "XINFO GROUPS: %v", err)

	assert.Empty(t, denials(t, admin), "ACL LOG after the reads")

	// The writes: each refused, and nothing changed. (The waiter, gone,
	// writes nothing either.)
	s.stopWaiter()
	before := dump(t, admin)
	r = cli(t, "", nil, "-u", url, "release", s.limiter, "h1")
	assert.Equal(t, 3, r.code)
	assert.Regexp(t, "NOPERM|can't run this command", r.stderr)
	r = cli(t, "", nil, "-u", url, "lock", "break", "-yes", s.lock)
	assert.Equal(t, 3, r.code)
	assert.Regexp(t, "NOPERM|can't run this command", r.stderr)
	assert.Equal(t, before, dump(t, admin), "the writes changed nothing")
	token, err := admin.Get(ctx, s.lock).Result()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(token, s.lockToken), "the lock is its owner's still")
	assert.NotEmpty(t, denials(t, admin), "the server denied the writes")
}

// Each command and key pattern of the reader's line is needed: without
// any one of them, a read fails or the server denies something.
func TestReaderACLLineIsLeast(t *testing.T) {
	words := strings.Fields(aclReader)
	for i, w := range words {
		if !strings.HasPrefix(w, "+") && !strings.HasPrefix(w, "~") {
			continue
		}
		line := strings.Join(slices.Delete(slices.Clone(words), i, i+1), " ")
		t.Run(w, func(t *testing.T) {
			admin, url := readerServer(t, line)
			s := newReaderScene(t, admin)
			failed := readerReads(t, url, s)
			opts, err := redis.ParseURL(url)
			require.NoError(t, err)
			reader := redis.NewClient(opts)
			defer reader.Close()
			reader.XInfoGroups(context.Background(), "{app:rp:0}:redpacket:log")
			assert.True(t, len(failed) > 0 || len(denials(t, admin)) > 0, "without %s, nothing failed", w)
		})
	}
}

// On a Redis Cluster, the reader's line with its Cluster additions, run
// on every node, lists the primitives on every master.
func TestReaderACLOnCluster(t *testing.T) {
	b := redistest.RedisCluster(t)
	cc := b.Client.(*redis.ClusterClient)
	ctx := context.Background()
	password := rand.Text()
	require.NoError(t, cc.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error {
		setReader(t, node, aclReader+aclReaderCluster, password)
		return nil
	}))
	t.Cleanup(func() {
		cc.ForEachShard(context.Background(), func(ctx context.Context, node *redis.Client) error {
			return node.Do(ctx, "ACL", "DELUSER", aclReaderUserName).Err()
		})
	})
	s := newReaderScene(t, cc)
	url := "redis://" + aclReaderUserName + ":" + password + "@" + b.Opts.Addrs[0]
	assert.Empty(t, readerReads(t, url, s, "-cluster"))
	r := cli(t, "", nil, "-cluster", "-u", url, "ls", "-json", "*"+s.tag)
	require.Equal(t, 0, r.code)
	for _, key := range s.keys() {
		assert.Contains(t, r.stdout, `"`+key+`"`)
	}
	assert.NotContains(t, r.stdout, "unreadable")
}

// denials returns the ACL log of admin's server, one line per entry.
func denials(t *testing.T, admin *redis.Client) []string {
	t.Helper()
	entries, err := admin.ACLLog(context.Background(), 1000).Result()
	require.NoError(t, err)
	var lines []string
	for _, e := range entries {
		lines = append(lines, e.Username+" denied "+e.Reason+" "+e.Object+" ("+e.Context+")")
	}
	return lines
}

// dump returns every key of admin's server with its value, serialized.
func dump(t *testing.T, admin *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	keys, err := admin.Keys(ctx, "*").Result()
	require.NoError(t, err)
	for _, k := range keys {
		v, err := admin.Dump(ctx, k).Result()
		require.NoError(t, err)
		out[k] = v
	}
	return out
}
