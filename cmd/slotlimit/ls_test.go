package main_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sort"
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

// An lsScene is one of each primitive, made by the library's own calls,
// each under a key that begins with the scene's tag, so that a PATTERN
// lists the scene alone on a Redis other tests share. The keys differ in
// their first letters, so that on a Cluster they land on several masters.
type lsScene struct {
	tag  string
	keys map[string]string // kind -> key, as ls lists them
}

// lsRow is a row of ls -json.
type lsRow struct {
	Kind    string           `json:"kind"`
	Key     string           `json:"key"`
	Prefix  string           `json:"prefix"`
	State   string           `json:"state"`
	Figures map[string]int64 `json:"figures"`
	Error   string           `json:"error"`
}

func newLsScene(t *testing.T, client redis.UniversalClient) *lsScene {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var b [4]byte
	rand.Read(b[:])
	s := &lsScene{tag: "ls" + hex.EncodeToString(b[:]), keys: map[string]string{}}
	key := func(kind, name string) string {
		k := name + ":" + s.tag
		s.keys[kind] = k
		return k
	}

	l, err := slotlimit.New(client, slotlimit.Config{Key: key("limiter", "lim"), Limit: 5, TTL: time.Hour})
	require.NoError(t, err)
	_, err = l.TryAcquireN(ctx, "a", 2)
	require.NoError(t, err)

	// A lock held, and a caller of Lock waiting for it, which queues.
	m, err := lock.New(client, lock.Config{Key: key("lock", "mutex"), TTL: time.Hour})
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

	q, err := delayqueue.New(client, delayqueue.Config{Key: key("delay queue", "queue")})
	require.NoError(t, err)
	_, err = q.Push(ctx, []byte("later"), time.Hour)
	require.NoError(t, err)

	list, err := recent.New(client, recent.Config{Key: key("recent list", "recent"), Max: 10})
	require.NoError(t, err)
	require.NoError(t, list.Add(ctx, "x", "y", "z"))

	store, err := redpacket.New(client, redpacket.Config{Shards: 4})
	require.NoError(t, err)
	packet := key("red packet", "packet")
	require.NoError(t, store.Create(ctx, redpacket.Packet{ID: packet, Total: 1000, Count: 10, Split: redpacket.Equal}))
	_, err = store.Grab(ctx, packet, "u1")
	require.NoError(t, err)

	rl, err := ratelimit.New(client, ratelimit.Config{})
	require.NoError(t, err)
	_, err = rl.Allow(ctx, key("rate limit", "gcra"), ratelimit.Limit{Rate: 10, Period: time.Hour}) // its time lasts 6 minutes
	require.NoError(t, err)

	a, err := adaptive.New(client, adaptive.Config{Key: key("adaptive limit", "adaptive"), Min: 2, Max: 40, Initial: 17, TTL: time.Hour})
	require.NoError(t, err)
	_, err = a.TryAcquire(ctx)
	require.NoError(t, err)

	// TODO: the Counter, a lock held with nobody waiting and a fixed
	// window are found by the records beside their keys; add them here
	// once those records are written.
	return s
}

// ls lists one of each primitive that the packages made, with its kind
// and its state, sorted by kind, then key; -kind and PATTERN filter.
func TestLsListsEveryPrimitive(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		s := newLsScene(t, b.Client)
		lsChecks(t, s, "-u", url)
	})
}

// On a Redis Cluster, ls reaches every master: the scene's keys lie on
// several, and each is listed once.
func TestLsOnCluster(t *testing.T) {
	b := redistest.RedisCluster(t)
	s := newLsScene(t, b.Client)
	masters := map[string]bool{}
	cc := b.Client.(*redis.ClusterClient)
	for _, k := range s.keys {
		node, err := cc.MasterForKey(context.Background(), k)
		require.NoError(t, err)
		masters[node.Options().Addr] = true
	}
	require.Greater(t, len(masters), 1, "the scene's keys lie on several masters")
	lsChecks(t, s, "-cluster", "-u", "redis://"+b.Opts.Addrs[0])
}

func lsChecks(t *testing.T, s *lsScene, conn ...string) {
	t.Helper()
	ls := func(args ...string) (run, []lsRow) {
		r := cli(t, "", nil, append(append(append([]string{}, conn...), "ls", "-json"), args...)...)
		var rows []lsRow
		if r.code <= 1 {
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
		}
		return r, rows
	}
	r, rows := ls("*" + s.tag)
	require.Equal(t, 0, r.code, r.stderr)
	got := map[string]string{}
	for _, row := range rows {
		assert.Empty(t, row.Error, row.Kind)
		_, dup := got[row.Kind]
		assert.False(t, dup, "each primitive once: %s", row.Kind)
		got[row.Kind] = row.Key
	}
	assert.Equal(t, s.keys, got)
	kinds := make([]string, 0, len(rows))
	for _, row := range rows {
		kinds = append(kinds, row.Kind)
	}
	assert.True(t, sort.StringsAreSorted(kinds), "sorted by kind: %v", kinds)

	states := map[string]string{}
	figures := map[string]map[string]int64{}
	for _, row := range rows {
		states[row.Kind], figures[row.Kind] = row.State, row.Figures
	}
	assert.Contains(t, states["limiter"], "2 ")
	assert.Equal(t, int64(2), figures["limiter"]["in_use"])
	assert.Equal(t, "held, ", states["lock"][:6])
	assert.Contains(t, states["lock"], "1 waiting")
	assert.Equal(t, "0 ready, 1 delayed, 0 in flight, 0 dead", states["delay queue"])
	assert.Contains(t, states["recent list"], "3 items")
	assert.Equal(t, "9 of 10 shares left", states["red packet"])
	assert.Contains(t, states["rate limit"], "gcra")
	assert.Contains(t, states["adaptive limit"], "limit 17")
	assert.Contains(t, states["adaptive limit"], "1 in flight")

	// The table: a header, then a row per primitive, with its state.
	r = cli(t, "", nil, append(append([]string{}, conn...), "ls", "*"+s.tag)...)
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "KIND")
	assert.Contains(t, r.stdout, "9 of 10 shares left")
	assert.Contains(t, r.stdout, s.keys["delay queue"])

	// -kind lists that kind alone, by its name or its command's.
	for _, kind := range []string{"delay queue", "queue", "delay-queue"} {
		r, rows = ls("-kind", kind, "*"+s.tag)
		require.Equal(t, 0, r.code)
		require.Len(t, rows, 1)
		assert.Equal(t, s.keys["delay queue"], rows[0].Key)
	}
	for kind, key := range s.keys {
		r, rows = ls("-kind", kind, "*"+s.tag)
		require.Equal(t, 0, r.code, kind)
		require.Len(t, rows, 1, kind)
		assert.Equal(t, key, rows[0].Key, kind)
	}

	// PATTERN matches the primitive's key, as SCAN MATCH would: not the
	// names beside it.
	r, rows = ls("[rq]*:" + s.tag)
	require.Equal(t, 0, r.code)
	got = map[string]string{}
	for _, row := range rows {
		got[row.Kind] = row.Key
	}
	assert.Equal(t, map[string]string{"recent list": s.keys["recent list"], "delay queue": s.keys["delay queue"]}, got)
	r, rows = ls("{" + s.keys["recent list"] + "}/recent")
	assert.Equal(t, 1, r.code, "a name beside a key is not its key")
	assert.Empty(t, rows)
	assert.Equal(t, "nothing found\n", r.stderr)

	// Nothing found: exit 1, and the line.
	r = cli(t, "", nil, append(append([]string{}, conn...), "ls", "-kind", "lock", "nosuch"+s.tag)...)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "nothing found\n", r.stderr)
	assert.Empty(t, r.stdout)

	// An unknown kind is bad usage.
	r = cli(t, "", nil, append(append([]string{}, conn...), "ls", "-kind", "nosuch")...)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `-kind "nosuch"`)
}

// slotlimit -h lists ls, and ls -h its -kind flag.
func TestLsHelp(t *testing.T) {
	r := cli(t, "", nil, "-h")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "ls [PATTERN]")
	assert.Contains(t, r.stdout, "ls that found nothing")
	r = cli(t, "", nil, "ls", "-h")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "usage: slotlimit [flags] ls [flags] [PATTERN]")
	assert.Contains(t, r.stdout, "-kind K")
	r = cli(t, "", nil, "-u", "127.0.0.1:1", "ls", "a", "b")
	assert.Equal(t, 2, r.code, "one PATTERN at most")
}
