package recent_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/recent"
)

// boundsKey is the name of the record of the bounds of the list at key.
func boundsKey(key string) string {
	if strings.Contains(key, "{") {
		return key + ":recent:bounds"
	}
	return "{" + key + "}/recent:bounds"
}

// A List's first Add records its Max and MaxAge beside the list, with one
// SET, and Adds within the next minute send none; Recorded reads them
// back, from any List of the Key. The record outlives the list by a
// minute: its TTL is the list's expiry and a minute.
func TestAddRecordsBounds(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client := b.NewClient(t)
		count := &redistest.CommandCounter{}
		client.AddHook(count)
		key := b.Key(t, "recent-test:")
		t.Cleanup(func() { b.Client.Del(context.Background(), boundsKey(key)) })
		l := newListOn(t, client, recent.Config{Key: key, Max: 7, MaxAge: time.Hour, TTL: 2 * time.Hour})
		reader := newListOn(t, b.Client, recent.Config{Key: key, Max: recent.MaxItems})

		_, known, err := reader.Recorded(ctx)
		require.NoError(t, err)
		assert.False(t, known, "nothing recorded before the first Add")

		require.NoError(t, client.Ping(ctx).Err(), "connects")
		before := count.Commands()
		require.NoError(t, l.Add(ctx, "a"))
		first := count.Commands()
		assert.LessOrEqual(t, first-before, int64(3), "one SET, and the script (EVALSHA, and EVAL on NOSCRIPT)")
		raw, err := b.Client.Get(ctx, boundsKey(key)).Result()
		require.NoError(t, err)
		fields, err := url.ParseQuery(raw)
		require.NoError(t, err)
		assert.Equal(t, url.Values{"max": {"7"}, "maxage": {"3600000"}}, fields)
		ttl := b.Client.PTTL(ctx, boundsKey(key)).Val()
		assert.Greater(t, ttl, time.Hour, "it outlives the list, which lapses an hour after its last Add")
		assert.LessOrEqual(t, ttl, time.Hour+time.Minute+time.Millisecond)

		for range 5 {
			require.NoError(t, l.Add(ctx, "b"))
		}
		assert.Equal(t, first+5, count.Commands(), "one script call per Add, no SET")

		got, known, err := reader.Recorded(ctx)
		require.NoError(t, err)
		assert.True(t, known)
		assert.Equal(t, recent.Config{Key: key, Max: 7, MaxAge: time.Hour}, got)
	})
}

// A list that never lapses keeps its record for a day after the Add that
// wrote it. Once the record has lapsed the list's items are read as ever,
// and Recorded says it knows no bounds.
func TestRecordOfAListThatNeverLapses(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, recent.Config{Max: 3})
		key := l.Config().Key
		t.Cleanup(func() { b.Client.Del(context.Background(), boundsKey(key)) })
		require.NoError(t, l.Add(ctx, "a", "b"))
		ttl := b.Client.PTTL(ctx, boundsKey(key)).Val()
		assert.Greater(t, ttl, 24*time.Hour)
		assert.LessOrEqual(t, ttl, 24*time.Hour+time.Minute)
		got, known, err := l.Recorded(ctx)
		require.NoError(t, err)
		assert.True(t, known)
		assert.Equal(t, recent.Config{Key: key, Max: 3}, got)

		require.NoError(t, b.Client.Del(ctx, boundsKey(key)).Err(), "as if it lapsed")
		assert.Equal(t, []string{"b", "a"}, values(t, l))
		_, known, err = l.Recorded(ctx)
		require.NoError(t, err)
		assert.False(t, known)
	})
}

// A record that is not one a List wrote is read as none; a key of another
// type there fails Recorded with WRONGTYPE, until an Add writes the record
// over it.
func TestRecordedOfAnotherValue(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l := newList(t, b, recent.Config{Max: 3})
		key := l.Config().Key
		t.Cleanup(func() { b.Client.Del(context.Background(), boundsKey(key)) })
		require.NoError(t, b.Client.Set(ctx, boundsKey(key), "max=x", time.Minute).Err())
		_, known, err := l.Recorded(ctx)
		require.NoError(t, err)
		assert.False(t, known)
		require.NoError(t, b.Client.Del(ctx, boundsKey(key)).Err())
		require.NoError(t, b.Client.HSet(ctx, boundsKey(key), "f", "v").Err())
		_, _, err = l.Recorded(ctx)
		assert.ErrorContains(t, err, "WRONGTYPE")
		require.NoError(t, l.Add(ctx, "a"))
		_, known, err = l.Recorded(ctx)
		require.NoError(t, err)
		assert.True(t, known)
		var nilList *recent.List
		_, _, err = nilList.Recorded(ctx)
		assert.ErrorIs(t, err, recent.ErrInvalidConfig)
	})
}

// failSet is a go-redis hook that fails every SET, as a server that
// refuses it would.
type failSet struct{ off atomic.Bool }

func (*failSet) DialHook(next redis.DialHook) redis.DialHook { return next }
func (*failSet) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (f *failSet) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "set" && !f.off.Load() {
			cmd.SetErr(errors.New("NOPERM no SET here"))
			return cmd.Err()
		}
		return next(ctx, cmd)
	}
}

// An Add whose record write fails adds as ever; the record is tried again
// a few seconds later (record.Retry), not before every Add, so that a
// Redis that does not answer costs each Add its own command alone.
func TestFailedRecordFailsNoAdd(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	client := b.NewClient(t)
	fail := &failSet{}
	client.AddHook(fail)
	key := b.Key(t, "recent-test:")
	l := newListOn(t, client, recent.Config{Key: key, Max: 3})
	require.NoError(t, l.Add(ctx, "a"))
	assert.Equal(t, []string{"a"}, values(t, l))
	_, known, err := l.Recorded(ctx)
	require.NoError(t, err)
	assert.False(t, known)

	fail.off.Store(true)
	require.NoError(t, l.Add(ctx, "b"))
	_, known, err = l.Recorded(ctx)
	require.NoError(t, err)
	assert.False(t, known, "the record is tried again at once")

	recent.RecordDueNow(l) // as record.Retry later
	require.NoError(t, l.Add(ctx, "c"))
	_, known, err = l.Recorded(ctx)
	require.NoError(t, err)
	assert.True(t, known)
}
