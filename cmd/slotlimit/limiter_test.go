package main_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A scene is a limiter's key as the tests find it: limit 5, device-1
// holding 1 unit and batch-7 holding 3, one refusal counted, and waiter-2
// queued for 2 units.
type scene struct {
	url    string
	client *redis.Client
	key    string
	l      *slotlimit.Limiter
	waited chan error // waiter-2's AcquireN, when it returns
}

func newScene(t *testing.T) *scene {
	t.Helper()
	url, client := server(t)
	s := &scene{url: url, client: client, key: testKey(t, "cli-test:ar:"), waited: make(chan error, 1)}
	var err error
	s.l, err = slotlimit.New(client, slotlimit.Config{Key: s.key, Limit: 5, TTL: time.Minute, CountRefusals: true})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		for _, h := range []string{"device-1", "batch-7", "waiter-2"} {
			s.l.Release(context.Background(), h) //nolint:errcheck // the leases lapse anyway
		}
	})

	_, err = s.l.TryAcquire(ctx, "device-1")
	require.NoError(t, err)
	_, err = s.l.TryAcquireN(ctx, "batch-7", 3)
	require.NoError(t, err)
	res, err := s.l.TryAcquireN(ctx, "refused-9", 2)
	require.NoError(t, err)
	require.False(t, res.Acquired)
	go func() {
		_, err := s.l.AcquireN(ctx, "waiter-2", 2)
		s.waited <- err
	}()
	require.Eventually(t, func() bool {
		snap, err := s.l.Inspect(ctx)
		return err == nil && len(snap.Queue) == 1
	}, 5*time.Second, 5*time.Millisecond, "waiter-2 queues")
	return s
}

type holdersOut struct {
	Key         string `json:"key"`
	Limit       *int64 `json:"limit"`
	InUse       int64  `json:"in_use"`
	HolderCount int    `json:"holder_count"`
	QueueLength int    `json:"queue_length"`
	Holders     []struct {
		ID        string    `json:"id"`
		Units     int64     `json:"units"`
		TTLMillis int64     `json:"ttl_ms"`
		ExpiresAt time.Time `json:"expires_at"`
	} `json:"holders"`
	Queue []struct {
		ID          string `json:"id"`
		Units       int64  `json:"units"`
		Limit       int64  `json:"limit"`
		LeaseMillis int64  `json:"lease_ms"`
	} `json:"queue"`
}

func TestCountPrintsUnitsInUse(t *testing.T) {
	s := newScene(t)
	r := cli(t, "", nil, "-u", s.url, "count", s.key)
	assert.Equal(t, 0, r.code)
	assert.Equal(t, "4 of 5 units in use\n", r.stdout, "the limit, recorded beside the key")

	r = cli(t, "", []string{"REDIS_URL=" + s.url}, "count", "-json", s.key)
	require.Equal(t, 0, r.code)
	var out holdersOut
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	assert.Equal(t, s.key, out.Key)
	assert.Equal(t, int64(4), out.InUse)
	require.NotNil(t, out.Limit, "recorded beside the key")
	assert.Equal(t, int64(5), *out.Limit)
	assert.Equal(t, 2, out.HolderCount)
	assert.Equal(t, 1, out.QueueLength)

}

func TestHoldersShowsLeasesAndQueue(t *testing.T) {
	s := newScene(t)
	r := cli(t, "", nil, "-u", s.url, "holders", s.key)
	require.Equal(t, 0, r.code)
	lines := strings.Split(r.stdout, "\n")
	assert.Equal(t, s.key+": 4 of 5 units in use by 2 holders; 1 waiting", lines[0])
	assert.Regexp(t, `(?m)^HOLDER +UNITS +TIME LEFT +EXPIRES AT`, r.stdout)
	assert.Regexp(t, `(?m)^device-1 +1 +(5\d(\.\d)?|1m0)s +20`, r.stdout)
	assert.Regexp(t, `(?m)^batch-7 +3 +(5\d(\.\d)?|1m0)s +20`, r.stdout)
	assert.Regexp(t, `(?m)^QUEUE +WAITER +UNITS +LIMIT +LEASE +ENTRY LAPSES IN$`, r.stdout)
	assert.Regexp(t, `(?m)^1 +waiter-2 +2 +5 +1m0s +[0-3](\.\d)?s$`, r.stdout)

	// -json after the command's name, and before it.
	for _, args := range [][]string{
		{"-u", s.url, "holders", "-json", s.key},
		{"-json", "-u", s.url, "holders", s.key},
	} {
		r := cli(t, "", nil, args...)
		require.Equal(t, 0, r.code, "%q", args)
		var out holdersOut
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), "%q", args)
		assert.Equal(t, s.key, out.Key)
		assert.Equal(t, int64(4), out.InUse)
		require.NotNil(t, out.Limit)
		assert.Equal(t, int64(5), *out.Limit)
		require.Len(t, out.Holders, 2)
		units := map[string]int64{}
		for _, h := range out.Holders {
			units[h.ID] = h.Units
			assert.True(t, h.TTLMillis > 50_000 && h.TTLMillis <= 60_000, "%s: %dms left", h.ID, h.TTLMillis)
			assert.WithinDuration(t, time.Now().Add(time.Duration(h.TTLMillis)*time.Millisecond), h.ExpiresAt, 5*time.Second)
		}
		assert.Equal(t, map[string]int64{"device-1": 1, "batch-7": 3}, units)
		require.Len(t, out.Queue, 1)
		assert.Equal(t, "waiter-2", out.Queue[0].ID)
		assert.Equal(t, int64(2), out.Queue[0].Units)
		assert.Equal(t, int64(5), out.Queue[0].Limit)
		assert.Equal(t, int64(60_000), out.Queue[0].LeaseMillis)
	}
}

// A force-release frees the holder's units with the release script itself,
// so the waiter is handed them and its Acquire returns.
func TestReleaseHandsUnitsToWaiter(t *testing.T) {
	s := newScene(t)
	select {
	case err := <-s.waited:
		t.Fatalf("waiter-2 returned before the release: %v", err)
	default:
	}
	r := cli(t, "", nil, "-u", s.url, "release", s.key, "batch-7")
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "released batch-7 on "+s.key+" (3 units)")
	assert.Contains(t, r.stdout, "handed to waiters: waiter-2 (2 units)")
	assert.Contains(t, r.stdout, "now 3 of 5 units in use; 0 waiting")
	select {
	case err := <-s.waited:
		require.NoError(t, err, "waiter-2's AcquireN")
	case <-time.After(5 * time.Second):
		t.Fatal("waiter-2 was not handed the units")
	}
	hs, err := s.l.Holders(context.Background())
	require.NoError(t, err)
	var ids []string
	for _, h := range hs {
		ids = append(ids, h.ID)
	}
	assert.ElementsMatch(t, []string{"device-1", "waiter-2"}, ids)

	// Released already: the answer is no.
	r = cli(t, "", nil, "-u", s.url, "release", s.key, "batch-7")
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "batch-7 held nothing on "+s.key+": nothing released\n", r.stdout)

	r = cli(t, "", nil, "-u", s.url, "release", "-json", s.key, "device-1")
	require.Equal(t, 0, r.code)
	var out struct {
		Released    bool  `json:"released"`
		Units       int64 `json:"units"`
		InUse       int64 `json:"in_use"`
		QueueLength int   `json:"queue_length"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	assert.Equal(t, true, out.Released)
	assert.Equal(t, int64(1), out.Units)
	assert.Equal(t, int64(2), out.InUse)

	r = cli(t, "", nil, "-json", "-u", s.url, "release", s.key, "device-1")
	assert.Equal(t, 1, r.code)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	assert.False(t, out.Released)
}

// The limit a Limiter records beside its key is shown with no flag, by
// count, holders, release and watch, while the key is neither full nor
// waited on.
func TestCommandsShowRecordedLimit(t *testing.T) {
	url, client := server(t)
	key := testKey(t, "cli-test:")
	l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: 10, TTL: time.Minute})
	require.NoError(t, err)
	for _, h := range []string{"a", "b"} {
		_, err = l.TryAcquire(context.Background(), h)
		require.NoError(t, err)
	}
	t.Cleanup(func() { l.Release(context.Background(), "a") }) //nolint:errcheck // it lapses anyway

	r := cli(t, "", nil, "-u", url, "count", key)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "2 of 10 units in use\n", r.stdout)
	r = cli(t, "", nil, "-u", url, "count", "-json", key)
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, `"limit": 10`)
	r = cli(t, "", nil, "-u", url, "holders", key)
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, key+": 2 of 10 units in use by 2 holders; 0 waiting\n")
	r = cli(t, "", nil, "-u", url, "watch", "-n", "1", key)
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "  in use     2 / 10 units")
	r = cli(t, "", nil, "-u", url, "release", key, "b")
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "now 1 of 10 units in use; 0 waiting\n")
	r = cli(t, "", nil, "-u", url, "count", "-limit", "12", key)
	require.Equal(t, 0, r.code)
	assert.Equal(t, "1 of 12 units in use\n", r.stdout, "-limit overrides the record")
}

// A key with no record, no marker and no waiter (as one last used by a
// release that kept no record) has its limit nowhere in Redis: the
// commands say so, and -limit gives it.
func TestUnknownLimit(t *testing.T) {
	url, client := server(t)
	key := testKey(t, "cli-test:")
	l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: 10, TTL: time.Minute})
	require.NoError(t, err)
	_, err = l.TryAcquire(context.Background(), "a")
	require.NoError(t, err)
	t.Cleanup(func() { l.Release(context.Background(), "a") }) //nolint:errcheck // it lapses anyway
	require.NoError(t, client.Del(context.Background(), "{"+key+"}/limit").Err())

	r := cli(t, "", nil, "-u", url, "holders", key)
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, key+": 1 unit in use by 1 holder; 0 waiting (limit unknown: none recorded, the key is not full and nobody waits; give -limit)")
	r = cli(t, "", nil, "-u", url, "count", "-json", key)
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, `"limit": null`)
	r = cli(t, "", nil, "-u", url, "count", "-limit", "10", key)
	require.Equal(t, 0, r.code)
	assert.Equal(t, "1 of 10 units in use\n", r.stdout)
	r = cli(t, "", nil, "-u", url, "holders", "-limit", "10", key)
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "1 of 10 units in use by 1 holder; 0 waiting")
	r = cli(t, "", nil, "-u", url, "release", key, "a")
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "now 0 units in use; 0 waiting (limit unknown")
}

// A key with no live lease, no queue and no limit recorded holds no
// limiter: count and holders exit 1 with "no limiter at KEY", with -limit
// too, and watch says so on its screen and exits 1 after it.
func TestNoLimiterAtKey(t *testing.T) {
	url, _ := server(t)
	key := testKey(t, "cli-test:nosuch:")
	for _, args := range [][]string{
		{"count", key},
		{"count", "-json", key},
		{"count", "-limit", "3", key},
		{"holders", key},
	} {
		r := cli(t, "", nil, append([]string{"-u", url}, args...)...)
		assert.Equal(t, 1, r.code, "%q", args)
		assert.Equal(t, "no limiter at "+key+"\n", r.stderr, "%q", args)
		assert.Empty(t, r.stdout, "%q", args)
	}
	r := cli(t, "", nil, "-u", url, "watch", "-n", "2", "-interval", "10ms", key)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, 2, strings.Count(r.stdout, "  no limiter at "+key+": no lease, no queue, no limit recorded\n"), r.stdout)
}

// A key that holds another type than a limiter's is explained in words: a
// list, and a Counter's integer.
func TestLimiterCommandsExplainWrongType(t *testing.T) {
	url, client := server(t)
	ctx := context.Background()
	list := testKey(t, "cli-test:list:")
	require.NoError(t, client.RPush(ctx, list, "x").Err())
	t.Cleanup(func() { client.Del(context.Background(), list) })
	counterKey := testKey(t, "cli-test:counter:")
	counter, err := slotlimit.NewCounter(client, slotlimit.Config{Key: counterKey, Limit: 3})
	require.NoError(t, err)
	_, err = counter.TryAcquire(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { client.Del(context.Background(), counterKey, "{"+counterKey+"}/limit") })

	for key, want := range map[string]string{
		list: list + " holds a Redis list, not a limiter",
		// A string the records beside it give to a Counter is named so.
		counterKey: counterKey + " holds a counter, not a limiter (count " + counterKey + " shows it)",
	} {
		for _, args := range [][]string{{"count", key}, {"holders", key}, {"release", key, "a"}} {
			if key == counterKey {
				continue // a Counter's own answers: TestCounterKey
			}
			r := cli(t, "", nil, append([]string{"-u", url}, args...)...)
			assert.Equal(t, 1, r.code, "%q", args)
			assert.Contains(t, r.stderr, want, "%q", args)
			assert.NotContains(t, r.stderr, "script", "%q: no script hash or line", args)
		}
		r := cli(t, "", nil, "-u", url, "watch", "-n", "1", key)
		assert.Equal(t, 1, r.code, "watch: the answer no, explained on its screen")
		assert.Contains(t, r.stdout, "\n  "+want)
		assert.NotContains(t, r.stdout, "error:")
	}
}

// With -cluster the command reaches a Redis Cluster through one node's
// URL, and finds the key's limit on the master of its slot.
func TestClusterURL(t *testing.T) {
	addrs := redistest.ClusterAddrs(t)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { client.Close() })
	ctx := context.Background()
	key := testKey(t, "cli-test:")
	l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute})
	require.NoError(t, err)
	for _, h := range []string{"a", "b"} {
		_, err := l.TryAcquire(ctx, h)
		require.NoError(t, err)
	}
	t.Cleanup(func() { l.Release(ctx, "a"); l.Release(ctx, "b") }) //nolint:errcheck // they lapse anyway

	r := cli(t, "", nil, "-cluster", "-u", "redis://"+addrs[0], "holders", "-json", key)
	require.Equal(t, 0, r.code)
	var out holdersOut
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.NotNil(t, out.Limit, "the full marker, on the master of the key's slot")
	assert.Equal(t, int64(2), *out.Limit)
	assert.Equal(t, int64(2), out.InUse)

	r = cli(t, "", nil, "-cluster", "-u", "redis://"+addrs[0], "release", key, "a")
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "now 1 of 2 units in use; 0 waiting")
}
