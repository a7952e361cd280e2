package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// An adaptiveScene is an adaptive limit as the tests find it: Initial 6,
// Min 2, Max 50; four slots taken, one of them dropped 200ms later, so the
// limit went down to 5 with 3 slots in use, and the drop delay is 200ms; then 2 more taken, full, and a caller of
// Acquire waiting.
type adaptiveScene struct {
	url   string
	b     *redistest.Backend
	key   string
	l     *adaptive.Limiter
	held  []*adaptive.Slot // the 5 slots held
	start time.Time        // the server's clock when the limit went down
}

func newAdaptiveScene(t *testing.T, url string, b *redistest.Backend) *adaptiveScene {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &adaptiveScene{url: url, b: b, key: testKey(t, "cli-test:adaptive:")}
	var err error
	s.l, err = adaptive.New(b.Client, adaptive.Config{Key: s.key, Min: 2, Max: 50, Initial: 6, TTL: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() {
		cancel()
		for _, slot := range s.held {
			slot.Ignore(context.Background()) //nolint:errcheck // the leases lapse anyway
		}
		deleteKeysOf(b.Client, s.key)
	})
	for range 4 {
		slot, err := s.l.TryAcquire(ctx)
		require.NoError(t, err)
		s.held = append(s.held, slot)
	}
	b.Advance(200 * time.Millisecond)
	require.NoError(t, s.held[0].Dropped(ctx)) // 6 down to 5, 3 in use
	s.start = b.Now()
	s.held = s.held[1:]
	b.Advance(10 * time.Millisecond) // the next slots are granted after the decrease
	for range 2 {
		slot, err := s.l.TryAcquire(ctx)
		require.NoError(t, err)
		s.held = append(s.held, slot)
	}
	go func() {
		if slot, err := s.l.Acquire(ctx); err == nil {
			<-ctx.Done()
			slot.Ignore(context.Background()) //nolint:errcheck // the lease lapses anyway
		}
	}()
	require.Eventually(t, func() bool {
		info, err := s.l.Inspect(ctx)
		return err == nil && info.Waiters == 1
	}, 5*time.Second, 5*time.Millisecond, "the caller of Acquire waits")
	return s
}

// deleteKeysOf deletes the keys whose names hold key.
func deleteKeysOf(client redis.UniversalClient, key string) {
	ctx := context.Background()
	for _, k := range client.Keys(ctx, "*"+key+"*").Val() {
		client.Del(ctx, k)
	}
}

// keysOf returns every key whose name holds key, each with its type, its
// contents and its time to live, as text.
func keysOf(t *testing.T, client redis.UniversalClient, key string) (contents map[string]string, ttls map[string]time.Duration) {
	t.Helper()
	ctx := context.Background()
	contents, ttls = map[string]string{}, map[string]time.Duration{}
	for _, k := range client.Keys(ctx, "*"+key+"*").Val() {
		typ := client.Type(ctx, k).Val()
		var v any
		switch typ {
		case "hash":
			v = client.HGetAll(ctx, k).Val()
		case "zset":
			v = client.ZRangeWithScores(ctx, k, 0, -1).Val()
		case "string":
			v = client.Get(ctx, k).Val()
		case "list":
			v = client.LRange(ctx, k, 0, -1).Val()
		case "set":
			m := client.SMembers(ctx, k).Val()
			sort.Strings(m)
			v = m
		default:
			t.Fatalf("key %s of type %s", k, typ)
		}
		contents[k] = fmt.Sprintf("%s %v", typ, v)
		ttls[k] = client.PTTL(ctx, k).Val()
	}
	return contents, ttls
}

// adaptive show prints the shared limit beside the slots in use, the
// waiters, when the limit last went down and up, on the server's clock,
// and the holders with their time left; -min and -max are shown beside
// the limit.
func TestAdaptiveShow(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		s := newAdaptiveScene(t, url, b)
		r := cli(t, "", nil, "-u", url, "adaptive", "show", s.key)
		require.Equal(t, 0, r.code)
		assert.Empty(t, r.stderr)
		out := r.stdout
		assert.Regexp(t, `^ADAPTIVE +`+regexp.QuoteMeta(s.key)+"\n", out)
		assert.Regexp(t, `(?m)^limit +5 \(min 2, max 50, as its Limiters recorded them\)$`, out, "no -min or -max: the bounds recorded")
		assert.Regexp(t, `(?m)^in use +5 of 5 slots$`, out)
		assert.Regexp(t, `(?m)^waiting +1$`, out)
		down := regexp.MustCompile(`(?m)^last down +(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC), (\S+) ago$`).FindStringSubmatch(out)
		require.NotNil(t, down, "the time of the decrease")
		at, err := time.Parse("2006-01-02 15:04:05.000 MST", down[1])
		require.NoError(t, err)
		assert.WithinDuration(t, s.start, at, 2*time.Second, "on the server's clock")
		assert.Regexp(t, `(?m)^last up +never \(within a day\)$`, out)
		delay := regexp.MustCompile(`(?m)^drop delay +(\S+)$`).FindStringSubmatch(out)
		require.NotNil(t, delay, "the drop delay")
		d, err := time.ParseDuration(delay[1])
		require.NoError(t, err)
		assert.True(t, d >= 200*time.Millisecond && d < 2*time.Second, "drop delay %v of a call dropped 200ms after its grant", d)
		assert.Regexp(t, `(?m)^server clock +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC$`, out)
		assert.Regexp(t, `(?m)^HOLDER +TIME LEFT +EXPIRES AT \(SERVER CLOCK\)$`, out)
		for _, slot := range s.held {
			assert.Regexp(t, `(?m)^`+regexp.QuoteMeta(slot.ID())+` +(5\d(\.\d)?s|1m0s) +\d{4}-`, out)
		}

		r = cli(t, "", nil, "-u", url, "adaptive", "show", s.key, "-min", "2", "-max", "50")
		require.Equal(t, 0, r.code)
		assert.Regexp(t, `(?m)^limit +5 \(min 2, max 50, as given\)$`, r.stdout)
		r = cli(t, "", nil, "-u", url, "adaptive", "show", s.key, "-max", "4")
		require.Equal(t, 0, r.code)
		assert.Regexp(t, `(?m)^limit +4 \(max 4, as given\)$`, r.stdout, "read as Limiters with Max 4 read it")
		assert.Regexp(t, `(?m)^in use +5 of 4 slots \(over the limit, which went down: no slot is granted until 2 more are freed\)$`, r.stdout)
	})
}

// adaptive show -json gives the limit, the slots in use and the waiters
// as JSON integers, the times on the server's clock, and the holders.
func TestAdaptiveShowJSON(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		s := newAdaptiveScene(t, url, b)
		r := cli(t, "", nil, "-u", url, "adaptive", "show", "-json", s.key)
		require.Equal(t, 0, r.code)
		assert.Equal(t, map[string]int64{"limit": 5, "in_use": 5, "waiters": 1},
			jsonInts(t, r.stdout, "limit", "in_use", "waiters"))
		var out struct {
			Key          string     `json:"key"`
			ServerTime   time.Time  `json:"server_time"`
			Stored       bool       `json:"stored"`
			Min          *int64     `json:"min"`
			Max          *int64     `json:"max"`
			Bounds       string     `json:"bounds"`
			LastDecrease *time.Time `json:"last_decrease"`
			LastIncrease *time.Time `json:"last_increase"`
			Holders      []struct {
				ID        string    `json:"id"`
				TTLMillis int64     `json:"ttl_ms"`
				ExpiresAt time.Time `json:"expires_at"`
			} `json:"holders"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
		assert.Equal(t, s.key, out.Key)
		assert.True(t, out.Stored)
		require.NotNil(t, out.Min, "recorded")
		require.NotNil(t, out.Max, "recorded")
		assert.Equal(t, [2]int64{2, 50}, [2]int64{*out.Min, *out.Max})
		assert.Equal(t, "recorded", out.Bounds)
		require.NotNil(t, out.LastDecrease)
		assert.WithinDuration(t, s.start, *out.LastDecrease, 2*time.Second)
		assert.Nil(t, out.LastIncrease, "never went up")
		delay := jsonInts(t, r.stdout, "drop_delay_ms")["drop_delay_ms"]
		assert.True(t, delay >= 200 && delay < 2000, "drop_delay_ms %d of a call dropped 200ms after its grant", delay)
		require.Len(t, out.Holders, 5)
		var ids []string
		for _, h := range out.Holders {
			ids = append(ids, h.ID)
			assert.True(t, h.TTLMillis > 50_000 && h.TTLMillis <= 60_000, "ttl_ms %d of a lease of a minute", h.TTLMillis)
			assert.Equal(t, h.ExpiresAt.Sub(out.ServerTime).Milliseconds(), h.TTLMillis)
		}
		for _, slot := range s.held {
			assert.Contains(t, ids, slot.ID())
		}

		r = cli(t, "", nil, "-u", url, "adaptive", "show", "-json", "-min", "3", "-max", "40", s.key)
		require.Equal(t, 0, r.code)
		assert.Equal(t, map[string]int64{"limit": 5, "min": 3, "max": 40}, jsonInts(t, r.stdout, "limit", "min", "max"))
		assert.Contains(t, r.stdout, `"bounds": "given"`)

		// A record lapsed: the limit as stored, its bounds unknown.
		require.NoError(t, b.Client.Del(context.Background(), "{"+s.key+"}/adaptive:bounds").Err())
		r = cli(t, "", nil, "-u", url, "adaptive", "show", "-json", s.key)
		require.Equal(t, 0, r.code)
		assert.Contains(t, r.stdout, `"min": null`)
		assert.Contains(t, r.stdout, `"bounds": "unknown"`)
	})
}

// adaptive show and adaptive watch write nothing: every key of the limit
// keeps its contents, a lapsed lease included, which a write would have
// pruned, and no expiry is pushed back.
func TestAdaptiveReadsWriteNothing(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		key := testKey(t, "cli-test:adaptive:")
		t.Cleanup(func() { deleteKeysOf(b.Client, key) })
		short, err := adaptive.New(b.Client, adaptive.Config{Key: key, Max: 10, Initial: 4, TTL: 200 * time.Millisecond})
		require.NoError(t, err)
		long, err := adaptive.New(b.Client, adaptive.Config{Key: key, Max: 10, Initial: 4, TTL: time.Minute})
		require.NoError(t, err)
		lapsing, err := short.TryAcquire(ctx)
		require.NoError(t, err)
		held, err := long.TryAcquire(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { held.Ignore(context.Background()) }) //nolint:errcheck // it lapses anyway
		b.Advance(300 * time.Millisecond)                       // lapsing's lease lapses, and stays until a write prunes it

		before, ttlsBefore := keysOf(t, b.Client, key)
		require.NotEmpty(t, before)
		require.Contains(t, fmt.Sprint(before), lapsing.ID(), "the lapsed lease is still there")
		for _, args := range [][]string{
			{"adaptive", "show", key},
			{"adaptive", "show", "-json", "-min", "3", "-max", "8", key},
			{"adaptive", "watch", "-n", "2", "-interval", "50ms", key},
			{"adaptive", "watch", "-json", "-n", "2", "-interval", "50ms", key},
		} {
			r := cli(t, "", nil, append([]string{"-u", url}, args...)...)
			require.Equal(t, 0, r.code, "%q", args)
			assert.NotContains(t, r.stdout, lapsing.ID(), "%q: a lapsed lease is not shown", args)
			assert.Contains(t, r.stdout, held.ID(), "%q", args)
		}
		after, ttlsAfter := keysOf(t, b.Client, key)
		assert.Equal(t, before, after, "every key as it was")
		for k, ttl := range ttlsAfter {
			assert.LessOrEqual(t, ttl, ttlsBefore[k], "%s: its expiry was not pushed back", k)
		}
	})
}

// A key that holds no adaptive limit is the answer no: adaptive show
// says so and exits 1, -json gives "stored": false and a null limit, and
// adaptive watch shows it and exits 1. A key of the root Limiter holds
// none either.
func TestAdaptiveNoLimitExits1(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		key := testKey(t, "cli-test:adaptive:")
		root, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 3, TTL: time.Minute})
		require.NoError(t, err)
		_, err = root.TryAcquire(ctx, "device-1")
		require.NoError(t, err)
		t.Cleanup(func() { root.Release(context.Background(), "device-1") }) //nolint:errcheck // it lapses anyway

		for _, k := range []string{key + ":never", key} {
			r := cli(t, "", nil, "-u", url, "adaptive", "show", k)
			assert.Equal(t, 1, r.code)
			assert.Equal(t, "no adaptive limit at "+k+": no slot was ever taken on it, or it was unused for a day (adaptive.StateTTL)\n", r.stderr)
			assert.Empty(t, r.stdout)

			r = cli(t, "", nil, "-u", url, "adaptive", "show", "-json", k)
			assert.Equal(t, 1, r.code)
			assert.Equal(t, map[string]int64{"in_use": 0, "waiters": 0}, jsonInts(t, r.stdout, "in_use", "waiters"))
			var out map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
			assert.Equal(t, false, out["stored"])
			assert.Contains(t, out, "limit")
			assert.Nil(t, out["limit"])

			r = cli(t, "", nil, "-u", url, "adaptive", "watch", "-n", "2", "-interval", "50ms", k)
			assert.Equal(t, 1, r.code)
			assert.Equal(t, 2, strings.Count(r.stdout, "  no adaptive limit at "+k), "on each screen")
			assert.NotContains(t, r.stdout, "\x1b")
		}
		assert.Zero(t, b.Client.Exists(ctx, "{"+key+":never}/adaptive").Val(), "nothing was written")
	})
}

// adaptive watch into a pipe writes plain screens, one after another
// after an empty line, with no terminal codes: the limit beside the slots
// in use, both over the last screens, and the holders.
func TestAdaptiveWatchIntoPipe(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		s := newAdaptiveScene(t, url, b)
		r := cli(t, "", nil, "-u", url, "adaptive", "watch", "-n", "3", "-interval", "100ms", s.key)
		require.Equal(t, 0, r.code)
		assert.NotContains(t, r.stdout, "\x1b", "no terminal codes")
		screens := strings.Split(r.stdout, "\n\nslotlimit adaptive watch  ")
		require.Len(t, screens, 3, "three screens, each after an empty line")
		assert.True(t, strings.HasPrefix(screens[0], "slotlimit adaptive watch  "+s.key+"\n"))
		for i, screen := range screens {
			assert.Regexp(t, fmt.Sprintf(`(?m)^redis 127\.0\.0\.1:\d+ +server clock .* UTC +every 100ms +screen %d of 3$`, i+1), screen)
			assert.Regexp(t, `(?m)^  limit +5 \(min 2, max 50, as its Limiters recorded them\)$`, screen)
			assert.Regexp(t, `(?m)^  in use +5 / 5 slots +\[#{40}\] +100%$`, screen)
			assert.Regexp(t, `(?m)^  waiting +1$`, screen)
			assert.Regexp(t, `(?m)^  last down +\d\d:\d\d:\d\d\.\d{3}, \S+ ago$`, screen)
			assert.Regexp(t, `(?m)^  last up +never \(within a day\)$`, screen)
			assert.Regexp(t, fmt.Sprintf(`(?m)^  the last %d screens?, oldest first:$`, i+1), screen)
			assert.Regexp(t, `(?m)^    limit  `+strings.Repeat(` 5`, i+1)+`$`, screen)
			assert.Regexp(t, `(?m)^    in use `+strings.Repeat(` 5`, i+1)+`$`, screen)
			for _, slot := range s.held {
				assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(slot.ID())+` +\S+s$`, screen)
			}
			assert.NotRegexp(t, `(?m) $`, screen, "no trailing spaces")
		}
		assert.True(t, strings.HasSuffix(r.stdout, "Ctrl-C quits.\n"), "ends with the last screen's last line")
	})
}

// adaptive watch shows the limit as it moves, beside the slots in use,
// on each screen and over the last screens; -json gives each screen as a
// line whose limit and in_use are JSON integers.
func TestAdaptiveWatchFollowsLimit(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		for _, asJSON := range []bool{false, true} {
			s := newAdaptiveScene(t, url, b)
			args := []string{"-u", url, "adaptive", "watch", "-n", "2", "-interval", "1s", s.key}
			if asJSON {
				args = append(args, "-json")
			}
			cmd := exec.Command(bin, args...)
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			lines := bufio.NewScanner(out)
			next := func() string { // a screen: a line of JSON, or lines up to "Ctrl-C quits."
				t.Helper()
				var screen strings.Builder
				for lines.Scan() {
					screen.WriteString(lines.Text() + "\n")
					if asJSON || lines.Text() == "Ctrl-C quits." {
						return screen.String()
					}
				}
				t.Fatalf("the screen ended early: %q", screen.String())
				return ""
			}
			first := next()
			// A drop of a slot granted since the last decrease, a Window
			// after it, frees the slot and cuts the limit: 5 × 0.9, one
			// less, is 4. The waiter is not handed the slot: 4 are in use.
			b.Advance(100 * time.Millisecond)
			last := len(s.held) - 1
			require.NoError(t, s.held[last].Dropped(ctx))
			s.held = s.held[:last]
			second := next()
			require.NoError(t, cmd.Wait())
			t.Logf("screens:\n%s\n%s", first, second)
			if asJSON {
				assert.Equal(t, map[string]int64{"screen": 1, "limit": 5, "in_use": 5, "waiters": 1},
					jsonInts(t, first, "screen", "limit", "in_use", "waiters"))
				assert.Equal(t, map[string]int64{"screen": 2, "limit": 4, "in_use": 4, "waiters": 1},
					jsonInts(t, second, "screen", "limit", "in_use", "waiters"))
				continue
			}
			assert.Regexp(t, `(?m)^  limit +5 \(min 2, max 50, as its Limiters recorded them\)$`, first)
			assert.Regexp(t, `(?m)^  in use +5 / 5 slots`, first)
			assert.Regexp(t, `(?m)^  limit +4 \(min 2, max 50, as its Limiters recorded them\)$`, second)
			assert.Regexp(t, `(?m)^  in use +4 / 4 slots`, second)
			assert.Regexp(t, `(?m)^    limit   5 4$`, second, "the limit over the last screens")
			assert.Regexp(t, `(?m)^    in use  5 4$`, second, "beside the slots in use")
		}
	})
}

// adaptive watch shows, as a user sees it in a terminal, the limit beside
// the slots in use, and redraws the screen over the last.
func TestAdaptiveWatchScreen(t *testing.T) {
	b := redistest.Redis(t)
	s := newAdaptiveScene(t, "redis://"+b.Opts.Addrs[0], b)
	term := newTerminal(t, bin, "-u", s.url, "adaptive", "watch", "-n", "30", s.key)
	screen := term.waitFor(`screen 2 of 30`)
	t.Logf("the screen:\n%s", screen)
	lines := strings.Split(screen, "\n")
	assert.Equal(t, "slotlimit adaptive watch  "+s.key, strings.TrimRight(lines[0], " "))
	assert.NotContains(t, screen, "screen 1 of 30", "drawn over the first screen")
	assert.Regexp(t, `(?m)^  limit +5 \(min 2, max 50, as its Limiters recorded them\) *$`, screen)
	assert.Regexp(t, `(?m)^  in use +5 / 5 slots +\[#{40}\] +100% *$`, screen)
	assert.Regexp(t, `(?m)^    limit   5 5 *$`, screen)
	assert.Regexp(t, `(?m)^    in use  5 5 *$`, screen)
	for _, slot := range s.held {
		assert.Regexp(t, `(?m)^  `+slot.ID()+` +\S+s *$`, screen)
	}
	assert.LessOrEqual(t, len(strings.Split(strings.TrimRight(screen, "\n "), "\n")), 30, "it fits the window")
}

// With -cluster, adaptive show reads an adaptive limit on a Redis Cluster
// through one node's URL.
func TestAdaptiveShowCluster(t *testing.T) {
	b := redistest.RedisCluster(t)
	ctx := context.Background()
	key := testKey(t, "cli-test:adaptive:")
	l, err := adaptive.New(b.Client, adaptive.Config{Key: key, Max: 10, Initial: 3, TTL: time.Minute})
	require.NoError(t, err)
	slot, err := l.TryAcquire(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { slot.Ignore(context.Background()) }) //nolint:errcheck // it lapses anyway

	r := cli(t, "", nil, "-cluster", "-u", "redis://"+b.Opts.Addrs[0], "adaptive", "show", "-json", key)
	require.Equal(t, 0, r.code)
	assert.Equal(t, map[string]int64{"limit": 3, "in_use": 1, "waiters": 0}, jsonInts(t, r.stdout, "limit", "in_use", "waiters"))
	assert.Contains(t, r.stdout, slot.ID())
}

// A key beside an adaptive limit that holds a value of another type is
// explained in words, with exit code 1.
func TestAdaptiveWrongType(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		key := testKey(t, "cli-test:adaptive:")
		side := "{" + key + "}/adaptive"
		require.NoError(t, b.Client.Set(ctx, side, "mine", time.Minute).Err())
		t.Cleanup(func() { b.Client.Del(context.Background(), side) })
		for _, args := range [][]string{{"adaptive", "show", key}, {"adaptive", "show", "-min", "1", "-max", "9", key}} {
			r := cli(t, "", nil, append([]string{"-u", url}, args...)...)
			assert.Equal(t, 1, r.code, "%q: %s", args, r.stderr)
			assert.Contains(t, r.stderr, key+": a key beside it holds a value of another type than an adaptive limit keeps there", "%q", args)
		}
	})
}

// adaptive show gives the latency estimate of a limit whose Limiters set
// RTTTolerance, as rows and as JSON, and no such rows for one without it
// (the scene of the tests above).
func TestAdaptiveShowLatency(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		key := testKey(t, "cli-test:adaptive:")
		t.Cleanup(func() { deleteKeysOf(b.Client, key) })
		l, err := adaptive.New(b.Client, adaptive.Config{Key: key, Max: 10, RTTTolerance: 2, Window: 10 * time.Millisecond})
		require.NoError(t, err)
		for range 2 { // the first success starts the window, the second ends it
			slot, err := l.TryAcquire(ctx)
			require.NoError(t, err)
			b.Advance(20 * time.Millisecond)
			require.NoError(t, slot.Success(ctx))
		}
		info, err := l.Inspect(ctx)
		require.NoError(t, err)
		require.Positive(t, info.Latency)
		require.Positive(t, info.NoLoadLatency)

		r := cli(t, "", nil, "-u", url, "adaptive", "show", key)
		require.Equal(t, 0, r.code)
		assert.Regexp(t, `(?m)^latency +`+regexp.QuoteMeta(info.Latency.String())+`$`, r.stdout)
		assert.Regexp(t, `(?m)^no-load latency +`+regexp.QuoteMeta(info.NoLoadLatency.String())+`$`, r.stdout)
		r = cli(t, "", nil, "-u", url, "adaptive", "show", "-json", key)
		require.Equal(t, 0, r.code)
		assert.Equal(t, map[string]int64{"latency_us": info.Latency.Microseconds(), "no_load_latency_ms": info.NoLoadLatency.Milliseconds()},
			jsonInts(t, r.stdout, "latency_us", "no_load_latency_ms"))

		s := newAdaptiveScene(t, url, b)
		r = cli(t, "", nil, "-u", url, "adaptive", "show", s.key)
		require.Equal(t, 0, r.code)
		assert.NotRegexp(t, `(?m)^latency`, r.stdout, "no RTTTolerance, no latency")
	})
}
