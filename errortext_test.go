package slotlimit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// Every error of a call names the package, the method, by its Go name in
// words, and the key: those returned before anything is sent (a bad
// holder, a nil function) and those of a call that was sent (here, Redis's
// WRONGTYPE for keys that hold another type).
func TestErrorsNameMethodAndKey(t *testing.T) {
	b := newRealRedis(t)
	ctx := context.Background()
	key := testKey(t, b)
	l := newLimiter(t, b, key, 2, time.Minute)
	c, err := slotlimit.NewCounter(b.Client, slotlimit.Config{Key: key + ":c", Limit: 2})
	require.NoError(t, err)

	sent := map[string]func() error{
		"try acquire":       func() error { _, err := l.TryAcquire(ctx, "h"); return err },
		"acquire":           func() error { _, err := l.Acquire(ctx, "h"); return err },
		"acquire n":         func() error { _, err := l.AcquireN(ctx, "h", 2); return err },
		"release":           func() error { return l.Release(ctx, "h") },
		"renew":             func() error { return l.Renew(ctx, "h") },
		"count":             func() error { _, err := l.Count(ctx); return err },
		"holders":           func() error { _, err := l.Holders(ctx); return err },
		"inspect":           func() error { _, err := l.Inspect(ctx); return err },
		"refusals":          func() error { _, err := l.Refusals(ctx); return err },
		"limits":            func() error { _, err := slotlimit.Limits(ctx, b.Client, key); return err },
		"try acquire batch": func() error { _, err := l.TryAcquireBatch(ctx, []string{"h"}); return err },
		"release batch":     func() error { _, err := l.ReleaseBatch(ctx, []string{"h"}); return err },
		"try acquire lease": func() error { _, err := l.TryAcquireLease(ctx, 1); return err },
		"acquire lease":     func() error { _, err := l.AcquireLease(ctx, 1); return err },
		"do":                func() error { return l.Do(ctx, 1, func(context.Context) error { return nil }) },
	}
	unsent := map[string]func() error{
		"try acquire":       func() error { _, err := l.TryAcquire(ctx, ""); return err },
		"try acquire n":     func() error { _, err := l.TryAcquireN(ctx, "h", 3); return err },
		"acquire n":         func() error { _, err := l.AcquireN(ctx, "", 1); return err },
		"acquire lease":     func() error { _, err := l.AcquireLease(ctx, 3); return err },
		"do":                func() error { return l.Do(ctx, 3, func(context.Context) error { return nil }) },
		"release":           func() error { return l.Release(ctx, "") },
		"renew":             func() error { return l.Renew(ctx, "") },
		"try acquire batch": func() error { _, err := l.TryAcquireBatch(ctx, []string{""}); return err },
		"release batch":     func() error { _, err := l.ReleaseBatch(ctx, []string{""}); return err },
		"count":             func() error { _, err := l.Count(nilContext); return err },
		"limits":            func() error { _, err := slotlimit.Limits(ctx, nil, key); return err },
	}
	counterSent := map[string]func() error{
		"try acquire": func() error { _, err := c.TryAcquire(ctx); return err },
		"acquire":     func() error { _, err := c.Acquire(ctx); return err },
		"release":     func() error { return c.Release(ctx) },
		"count":       func() error { _, err := c.Count(ctx); return err },
	}

	check := func(what, key string, calls map[string]func() error) {
		for words, call := range calls {
			err := call()
			require.Error(t, err, "%s %s", what, words)
			prefix := "slotlimit: " + words + " " + `"` + key + `": `
			assert.True(t, strings.HasPrefix(err.Error(), prefix), "%s: %q does not begin %q", what, err, prefix)
		}
	}
	check("before sending", key, unsent)
	err = l.Do(ctx, 1, nil)
	assert.ErrorIs(t, err, slotlimit.ErrInvalidArgument)
	assert.EqualError(t, err, `slotlimit: do "`+key+`": invalid argument: nil function`)

	// Every key of the Limiter and the Counter holds another type.
	for _, k := range storedKeysAll(key) {
		require.NoError(t, b.Client.Set(ctx, k, "x", 0).Err())
	}
	require.NoError(t, b.Client.HSet(ctx, key+":c", "f", "x").Err())
	check("sent", key, sent)
	check("counter", key+":c", counterSent)
	check("lease", key, map[string]func() error{
		"release": func() error { return l.Lease("h").Release(ctx) },
		"renew":   func() error { return l.Lease("h").Renew(ctx) },
	})
}

// nilContext is a nil context, passed on purpose.
var nilContext context.Context

// storedKeysAll returns the names of every key a Limiter of limit 2 keeps
// at and beside key, a key without a hash tag.
func storedKeysAll(key string) []string {
	names := []string{key}
	for _, side := range []string{"w", "full:2", "q", "qd", "qw", "refused"} {
		names = append(names, "{"+key+"}/"+side)
	}
	return names
}
