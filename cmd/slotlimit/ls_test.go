package main_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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

// An lsScene is one of each primitive, made by the library's own calls,
// each under a key that begins with the scene's tag, so that a PATTERN
// lists the scene alone on a Redis other tests share. The keys differ in
// their first letters, so that on a Cluster they land on several masters.
// Some kinds come twice, found by different keys: a lock with a waiter
// (found by its queue) and one without (found by its owner's record), and
// a GCRA rate limit (found by its data) and a fixed window (found by its
// rate record alone, for its count is at the key itself).
type lsScene struct {
	tag   string
	prims []lsPrim // as ls lists them: by kind, then key
}

// An lsPrim is a primitive of a scene: its kind and key, and the state
// ls must show for it.
type lsPrim struct {
	kind, key, state string
}

// keys returns the scene's keys of kind.
func (s *lsScene) keys(kind string) []string {
	var keys []string
	for _, p := range s.prims {
		if p.kind == kind {
			keys = append(keys, p.key)
		}
	}
	return keys
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

// lsOwner is the owner description of the scene's locks.
const lsOwner = "ls test pid 1"

func newLsScene(t *testing.T, client redis.UniversalClient) *lsScene {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var b [4]byte
	rand.Read(b[:])
	s := &lsScene{tag: "ls" + hex.EncodeToString(b[:])}
	key := func(kind, name, state string) string {
		k := name + ":" + s.tag
		s.prims = append(s.prims, lsPrim{kind, k, state})
		return k
	}

	// The state of each is matched as a regular expression.
	l, err := slotlimit.New(client, slotlimit.Config{Key: key("limiter", "lim", `^2 of 5 units in use, 0 waiting$`), Limit: 5, TTL: time.Hour})
	require.NoError(t, err)
	_, err = l.TryAcquireN(ctx, "a", 2)
	require.NoError(t, err)

	c, err := slotlimit.NewCounter(client, slotlimit.Config{Key: key("counter", "ctr", `^1 of 3 units in use$`), Limit: 3, TTL: time.Hour})
	require.NoError(t, err)
	_, err = c.TryAcquire(ctx)
	require.NoError(t, err)

	// A lock held, and a caller of Lock waiting for it, which queues.
	m, err := lock.New(client, lock.Config{Key: key("lock", "mutex", `^held by `+lsOwner+`, \d.* left, 1 waiting$`), TTL: time.Hour, Owner: lsOwner})
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

	// A lock held with nobody waiting, by a Mutex that describes its
	// owner by default (host and process).
	alone, err := lock.New(client, lock.Config{Key: key("lock", "bolt", `^held by (.+ )?pid \d+, \d.* left$`), TTL: time.Hour})
	require.NoError(t, err)
	heldAlone, err := alone.TryLock(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { heldAlone.Unlock(context.Background()) })

	q, err := delayqueue.New(client, delayqueue.Config{Key: key("delay queue", "queue", `^0 ready, 1 delayed, 0 in flight, 0 dead$`)})
	require.NoError(t, err)
	_, err = q.Push(ctx, []byte("later"), time.Hour)
	require.NoError(t, err)

	list, err := recent.New(client, recent.Config{Key: key("recent list", "recent", `^3 items \(max 10\)$`), Max: 10})
	require.NoError(t, err)
	require.NoError(t, list.Add(ctx, "x", "y", "z"))

	store, err := redpacket.New(client, redpacket.Config{Shards: 4})
	require.NoError(t, err)
	packet := key("red packet", "packet", `^9 of 10 shares left$`)
	require.NoError(t, store.Create(ctx, redpacket.Packet{ID: packet, Total: 1000, Count: 10, Split: redpacket.Equal}))
	_, err = store.Grab(ctx, packet, "u1")
	require.NoError(t, err)

	rl, err := ratelimit.New(client, ratelimit.Config{})
	require.NoError(t, err)
	_, err = rl.Allow(ctx, key("rate limit", "gcra", `^gcra 10/1h0m0s, 9 allowed now$`), ratelimit.Limit{Rate: 10, Period: time.Hour}) // its time lasts 6 minutes
	require.NoError(t, err)
	_, err = rl.AllowN(ctx, key("rate limit", "window", `^fixed window 5/1h0m0s, 3 allowed now$`), ratelimit.Limit{Algorithm: ratelimit.FixedWindow, Rate: 5, Period: time.Hour}, 2)
	require.NoError(t, err)

	a, err := adaptive.New(client, adaptive.Config{Key: key("adaptive limit", "adaptive", `^limit 17 \(2\.\.40\), 1 in flight$`), Min: 2, Max: 40, Initial: 17, TTL: time.Hour})
	require.NoError(t, err)
	_, err = a.TryAcquire(ctx)
	require.NoError(t, err)

	slices.SortFunc(s.prims, func(a, b lsPrim) int { return cmp.Or(strings.Compare(a.kind, b.kind), strings.Compare(a.key, b.key)) })
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
	for _, p := range s.prims {
		node, err := cc.MasterForKey(context.Background(), p.key)
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
	// kindKeys returns the kind and key of each row.
	kindKeys := func(rows []lsRow) [][2]string {
		out := make([][2]string, 0, len(rows))
		for _, row := range rows {
			out = append(out, [2]string{row.Kind, row.Key})
		}
		return out
	}

	// Each primitive once, in order, with its state and no error.
	r, rows := ls("*" + s.tag)
	require.Equal(t, 0, r.code, r.stderr)
	want := make([][2]string, 0, len(s.prims))
	for _, p := range s.prims {
		want = append(want, [2]string{p.kind, p.key})
	}
	require.Equal(t, want, kindKeys(rows), "every primitive, once, by kind then key")
	kinds := map[string]bool{}
	figures := map[string]map[string]int64{}
	for i, row := range rows {
		kinds[row.Kind] = true
		figures[row.Key] = row.Figures
		assert.Empty(t, row.Error, row.Key)
		assert.Regexp(t, s.prims[i].state, row.State, row.Key)
	}
	assert.Len(t, kinds, 8, "one of each kind at least: %v", kinds)

	// The figures, for scripts and plots.
	key := func(kind string, i int) string { return s.keys(kind)[i] }
	assert.Equal(t, map[string]int64{"in_use": 2, "limit": 5, "holders": 1, "waiting": 0}, figures[key("limiter", 0)])
	assert.Equal(t, map[string]int64{"in_use": 1, "limit": 3}, figures[key("counter", 0)])
	assert.Equal(t, int64(1), figures[key("lock", 0)]["held"])
	assert.Equal(t, int64(0), figures[key("lock", 0)]["waiting"], "the lone lock")
	assert.Equal(t, int64(1), figures[key("lock", 1)]["waiting"])
	assert.Equal(t, int64(9), figures[key("rate limit", 0)]["remaining"], "gcra")
	assert.Equal(t, int64(10), figures[key("rate limit", 0)]["burst"], "gcra")
	assert.Equal(t, int64(3), figures[key("rate limit", 1)]["remaining"], "fixed window")
	assert.Equal(t, int64(5), figures[key("rate limit", 1)]["burst"], "fixed window: its Rate at once")
	assert.Equal(t, int64(3600000), figures[key("rate limit", 1)]["period_ms"])

	// The table: a header, then a row per primitive, with its state.
	r = cli(t, "", nil, append(append([]string{}, conn...), "ls", "*"+s.tag)...)
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "KIND")
	assert.Contains(t, r.stdout, "9 of 10 shares left")
	assert.Contains(t, r.stdout, "held by "+lsOwner)
	assert.Contains(t, r.stdout, key("delay queue", 0))
	assert.Len(t, strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"), 1+len(s.prims))

	// -kind lists that kind alone, by its name or its command's.
	for _, kind := range []string{"delay queue", "queue", "delay-queue"} {
		r, rows = ls("-kind", kind, "*"+s.tag)
		require.Equal(t, 0, r.code)
		require.Len(t, rows, 1)
		assert.Equal(t, key("delay queue", 0), rows[0].Key)
	}
	for kind := range kinds {
		r, rows = ls("-kind", kind, "*"+s.tag)
		require.Equal(t, 0, r.code, kind)
		var want [][2]string
		for _, k := range s.keys(kind) {
			want = append(want, [2]string{kind, k})
		}
		assert.Equal(t, want, kindKeys(rows), kind)
	}

	// PATTERN matches the primitive's key, as SCAN MATCH would: not the
	// names beside it.
	r, rows = ls("[rq]*:" + s.tag)
	require.Equal(t, 0, r.code)
	assert.Equal(t, [][2]string{{"delay queue", key("delay queue", 0)}, {"recent list", key("recent list", 0)}}, kindKeys(rows))
	r, rows = ls("{" + key("recent list", 0) + "}/recent")
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
