package recent_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/recent"
)

// Bad configs, bad arguments, nil and zero values return clear errors,
// with nothing sent, and never panic.
func TestBadInputSendsNothing(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		client := b.NewClient(t)
		count := &redistest.CommandCounter{}
		client.AddHook(count)
		for _, cfg := range []recent.Config{
			{},
			{Key: "k"},
			{Key: "k", Max: -1},
			{Key: "k", Max: 1, TTL: -time.Second},
			{Key: "k", Max: 1, TTL: time.Microsecond},
			{Key: "k", Max: 1, MaxAge: -time.Second},
			{Key: "k", Max: 1, MaxAge: time.Microsecond},
			{Key: "k", Max: math.MinInt64},
			{Key: "k", Max: 1, TTL: math.MinInt64},
			{Key: "a}b", Max: 1},
			{Key: "{}a}", Max: 1},
		} {
			l, err := recent.New(client, cfg)
			assert.ErrorIs(t, err, recent.ErrInvalidConfig, "%+v", cfg)
			assert.Nil(t, l, "%+v", cfg)
		}
		_, err := recent.New(nil, recent.Config{Key: "k", Max: 1})
		assert.ErrorIs(t, err, recent.ErrInvalidConfig)
		var nilClient *redis.Client
		_, err = recent.New(nilClient, recent.Config{Key: "k", Max: 1})
		assert.ErrorIs(t, err, recent.ErrInvalidConfig)
		var nilUniversal redis.UniversalClient = nilClient
		_, err = recent.New(nilUniversal, recent.Config{Key: "k", Max: 1})
		assert.ErrorIs(t, err, recent.ErrInvalidConfig, "a typed nil in the interface")
		assert.Zero(t, count.Commands(), "New sent nothing")

		ctx := context.Background()
		l := newListOn(t, client, recent.Config{Key: b.Key(t, "recent-test:"), Max: 3})
		tooMany := make([]string, recent.MaxBatch+1)
		var nilCtx context.Context
		for _, c := range []struct {
			name, method string
			call         func() error
		}{
			{"add too many", "add", func() error { return l.Add(ctx, tooMany...) }},
			{"remove too many", "remove", func() error { _, err := l.Remove(ctx, tooMany...); return err }},
			{"negative offset", "items", func() error { _, err := l.Items(ctx, -1, 1); return err }},
			{"negative count", "items", func() error { _, err := l.Items(ctx, 0, -1); return err }},
			{"most negative offset", "items", func() error { _, err := l.Items(ctx, math.MinInt64, math.MaxInt64); return err }},
			{"add, nil ctx", "add", func() error { return l.Add(nilCtx, "a") }},
			{"remove, nil ctx", "remove", func() error { _, err := l.Remove(nilCtx, "a"); return err }},
			{"items, nil ctx", "items", func() error { _, err := l.Items(nilCtx, 0, 1); return err }},
			{"len, nil ctx", "len", func() error { _, err := l.Len(nilCtx); return err }},
		} {
			err := c.call()
			assert.ErrorIs(t, err, recent.ErrInvalidArgument, c.name)
			assert.NotErrorIs(t, err, recent.ErrOutcomeUnknown, c.name)
			assertNamesMethodOnce(t, err, c.method, c.name)
		}
		assert.NoError(t, l.Add(ctx))
		n, err := l.Remove(ctx)
		assert.NoError(t, err)
		assert.Zero(t, n)
		items, err := l.Items(ctx, 3, 10)
		assert.NoError(t, err)
		assert.Empty(t, items)
		assert.Zero(t, count.Commands(), "nothing was sent")

		for _, z := range []*recent.List{nil, new(recent.List)} {
			for _, c := range []struct {
				method string
				call   func() error
			}{
				{"add", func() error { return z.Add(ctx, "a") }},
				{"items", func() error { _, err := z.Items(ctx, 0, 1); return err }},
				{"remove", func() error { _, err := z.Remove(ctx, "a"); return err }},
				{"len", func() error { _, err := z.Len(ctx); return err }},
				{"add", func() error { return z.Add(nilCtx) }},
			} {
				err := c.call()
				assert.ErrorIs(t, err, recent.ErrInvalidConfig, c.method)
				assert.NotErrorIs(t, err, recent.ErrOutcomeUnknown, c.method)
				assertNamesMethodOnce(t, err, c.method, "a zero or nil List")
			}
			assert.Equal(t, recent.Config{}, z.Config())
		}
	})
}

// A key of another type fails every call with WRONGTYPE and is left as it
// was.
func TestWrongTypeLeavesKeyUntouched(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		for _, maxAge := range []time.Duration{0, time.Minute} {
			l := newList(t, b, recent.Config{Max: 3, TTL: time.Minute, MaxAge: maxAge})
			key := recent.DataKey(l)
			require.NoError(t, b.Client.RPush(ctx, key, "x").Err())
			_, err := l.Items(ctx, 0, 3)
			errs := []error{l.Add(ctx, "a"), err}
			_, err = l.Remove(ctx, "x")
			errs = append(errs, err)
			_, err = l.Len(ctx)
			errs = append(errs, err)
			for i, err := range errs {
				require.Error(t, err, "call %d", i)
				assert.Contains(t, err.Error(), "WRONGTYPE", "call %d", i)
				assert.NotErrorIs(t, err, recent.ErrOutcomeUnknown, "call %d: a Redis error reply is a known outcome", i)
				assert.Contains(t, err.Error(), l.Config().Key, "call %d names the key", i)
				assertNamesMethodOnce(t, err, []string{"add", "items", "remove", "len"}[i], "WRONGTYPE")
			}
			assert.Equal(t, []string{"x"}, b.Client.LRange(ctx, key, 0, -1).Val())
			assert.Equal(t, time.Duration(-1), b.Client.TTL(ctx, key).Val(), "no expiry was set")
		}
	})
}

// SCRIPT FLUSH every 2ms while 8 goroutines add: no call fails (NOSCRIPT
// is answered with EVAL), and the list ends with the last Max.
func TestScriptFlushUnderLoad(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		l := newList(t, b, recent.Config{Max: 20})
		flush := func() error {
			if cluster, ok := b.Client.(*redis.ClusterClient); ok {
				return cluster.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
					return m.ScriptFlush(ctx).Err()
				})
			}
			return b.Client.ScriptFlush(ctx).Err()
		}
		var flushes atomic.Int64
		flushed := make(chan struct{})
		go func() {
			defer close(flushed)
			for ctx.Err() == nil {
				time.Sleep(2 * time.Millisecond)
				if flush() == nil {
					flushes.Add(1)
				}
			}
		}()
		var failed atomic.Int64
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 100 {
					if l.Add(ctx, fmt.Sprintf("g%d-%d", g, i)) != nil {
						failed.Add(1)
					}
					if _, err := l.Items(ctx, 0, 5); err != nil {
						failed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		cancel()
		<-flushed
		assert.Zero(t, failed.Load(), "failed calls")
		assert.Positive(t, flushes.Load())
		require.NoError(t, l.Add(context.Background(), "last"))
		got := values(t, l)
		assert.Len(t, got, 20)
		assert.Equal(t, "last", got[0])
	})
}

// A Redis that is down fails each call with an error; a ctx that has
// ended fails it with ctx's error.
func TestRedisDownAndContext(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer client.Close()
	l := newListOn(t, client, recent.Config{Key: "k", Max: 3})
	ctx := context.Background()
	errs := []error{l.Add(ctx, "a")}
	_, err := l.Items(ctx, 0, 3)
	errs = append(errs, err)
	_, err = l.Remove(ctx, "a")
	errs = append(errs, err)
	_, err = l.Len(ctx)
	errs = append(errs, err)
	for i, err := range errs {
		assert.Error(t, err, "call %d", i)
		assert.NotErrorIs(t, err, recent.ErrOutcomeUnknown, "call %d: never sent, for want of a connection", i)
	}

	b := redistest.Miniredis(t)
	l = newList(t, b, recent.Config{Max: 3})
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	err = l.Add(cancelled, "a")
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, recent.ErrOutcomeUnknown, "an ended ctx sends nothing")
	assertNamesMethodOnce(t, err, "add", "an ended ctx")
	_, err = l.Remove(cancelled, "a")
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, recent.ErrOutcomeUnknown, "an ended ctx sends nothing")
	_, err = l.Items(cancelled, 0, 3)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.Zero(t, b.Client.Exists(ctx, recent.DataKey(l)).Val(), "nothing was added")
}

// assertNamesMethodOnce checks that err's text names the package once and
// the method that failed, as `recent: add "k": ...`.
func assertNamesMethodOnce(t *testing.T, err error, method, msg string) {
	t.Helper()
	if !assert.Error(t, err, msg) {
		return
	}
	text := err.Error()
	assert.Equal(t, 1, strings.Count(text, "recent:"), "%s: %q names the package once", msg, text)
	assert.True(t, strings.HasPrefix(text, "recent: "+method+" ") || strings.HasPrefix(text, "recent: "+method+":"),
		"%s: %q names the method %s", msg, text, method)
}

// Any value, empty, binary or large, is kept byte for byte, and removed.
func TestAnyValueRoundTrips(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, recent.Config{Max: 10, TTL: time.Minute, MaxAge: time.Minute})
		vals := []string{"", "\x00", "\xff\xfe", "é ✓", strings.Repeat("x", 1<<19), "-inf", "(1", "1e400"}
		require.NoError(t, l.Add(ctx, vals...))
		want := make([]string, len(vals))
		for i, v := range vals {
			want[len(vals)-1-i] = v
		}
		assert.Equal(t, want, values(t, l))
		n, err := l.Remove(ctx, append(vals, vals...)...)
		require.NoError(t, err)
		assert.Equal(t, int64(len(vals)), n)
		assert.Zero(t, b.Client.Exists(ctx, recent.DataKey(l)).Val())
	})
}
