package adaptive_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A nil or zero *Slot was not made by TryAcquire or Acquire: Success,
// Dropped and Ignore return ErrInvalidConfig, naming the method, and
// never ErrNotHeld, which is kept for a Slot that held a slot and no
// longer does.
func TestSlotNotMadeByLimiterIsInvalid(t *testing.T) {
	ctx := context.Background()
	for _, s := range []*adaptive.Slot{nil, new(adaptive.Slot)} {
		for _, f := range []struct {
			method string
			call   func(context.Context) error
		}{{"success", s.Success}, {"dropped", s.Dropped}, {"ignore", s.Ignore}} {
			err := f.call(ctx)
			assert.ErrorIs(t, err, adaptive.ErrInvalidConfig, f.method)
			assert.NotErrorIs(t, err, adaptive.ErrNotHeld, f.method)
			assert.True(t, strings.HasPrefix(err.Error(), "adaptive: "+f.method+": "), "%s: %q names the method", f.method, err)
		}
		assert.Empty(t, s.ID())
	}
}

// Every error returned before anything is sent names the package, the
// method and the key, as every error after sending does.
func TestErrorsBeforeSendingNameMethodAndKey(t *testing.T) {
	b := redistest.Miniredis(t)
	l, key := newLimiter(t, b, adaptive.Config{Max: 2})
	slot, err := l.TryAcquire(context.Background())
	require.NoError(t, err)
	var nilCtx context.Context
	_, tryErr := l.TryAcquire(nilCtx)
	_, acquireErr := l.Acquire(nilCtx)
	_, limitErr := l.Limit(nilCtx)
	_, inspectErr := l.Inspect(nilCtx)
	for _, s := range []struct {
		method string
		err    error
	}{
		{"try acquire", tryErr},
		{"acquire", acquireErr},
		{"limit", limitErr},
		{"inspect", inspectErr},
		{"success", slot.Success(nilCtx)},
		{"dropped", slot.Dropped(nilCtx)},
		{"ignore", slot.Ignore(nilCtx)},
	} {
		assert.ErrorIs(t, s.err, adaptive.ErrInvalidArgument, s.method)
		assert.True(t, strings.HasPrefix(s.err.Error(), "adaptive: "+s.method+` "`+key+`": `), "%s: %q", s.method, s.err)
	}
	require.NoError(t, slot.Ignore(context.Background()))

	var zero adaptive.Limiter
	_, tryErr = zero.TryAcquire(context.Background())
	_, acquireErr = zero.Acquire(context.Background())
	_, limitErr = zero.Limit(context.Background())
	_, inspectErr = zero.Inspect(context.Background())
	for _, s := range []struct {
		method string
		err    error
	}{{"try acquire", tryErr}, {"acquire", acquireErr}, {"limit", limitErr}, {"inspect", inspectErr}} {
		assert.ErrorIs(t, s.err, adaptive.ErrInvalidConfig, s.method)
		assert.True(t, strings.HasPrefix(s.err.Error(), "adaptive: "+s.method+": "), "%s: %q", s.method, s.err)
	}
}

// inspect.lua leads its reply with a status, as every script does.
func TestInspectReplyLeadsWithStatus(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		l, _ := newLimiter(t, b, adaptive.Config{Max: 2})
		reply, err := adaptive.InspectReply(context.Background(), l)
		require.NoError(t, err)
		require.NotEmpty(t, reply)
		assert.Equal(t, int64(1), reply[0], "the status")
	})
}

// New refuses, as a Key, the name of every key and channel beside
// another limit, in both forms, and the keys of the module's other
// packages, so that a Limiter never meets their data.
func TestNewRefusesKeysBesideAnother(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	for _, base := range []string{"payments", "{t}:payments"} {
		keys, channel := adaptive.Keys(base)
		for _, key := range append(keys, channel, "{t}/lock:q", "{t}:x:recent") {
			_, err := adaptive.New(client, adaptive.Config{Key: key, Max: 10})
			assert.ErrorIs(t, err, adaptive.ErrInvalidConfig, key)
			assert.ErrorContains(t, err, key, "the error names the key")
		}
	}
}
