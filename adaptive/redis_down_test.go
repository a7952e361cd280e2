package adaptive_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/loopback"
)

// cleanupBound is the most a failed TryAcquire or Acquire takes past its
// deadline to free what it may hold (the package doc's second).
const cleanupBound = time.Second

// With Redis down, a call that never reached a server (every dial was
// refused) sent nothing: its error does not match ErrOutcomeUnknown, even
// with ContextTimeoutEnabled, go-redis's own retries (MaxRetries left at
// its default) and a deadline that passes while they run, and it returns
// by its deadline plus the bound of the cleanup that follows an unknown
// outcome.
func TestRedisDownCallsThatSentNothingAreNotUnknown(t *testing.T) {
	addr, err := loopback.FreeAddr() // nothing listens there
	require.NoError(t, err)
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer client.Close()
	l := newLimiterOn(t, client, adaptive.Config{Key: "down", Max: 5})
	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"TryAcquire", func(ctx context.Context) error { _, err := l.TryAcquire(ctx); return err }},
		{"Acquire", func(ctx context.Context) error { _, err := l.Acquire(ctx); return err }},
	}
	for _, timeout := range []time.Duration{10 * time.Millisecond, 200 * time.Millisecond} {
		for _, c := range calls {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			start := time.Now()
			err := c.call(ctx)
			took := time.Since(start)
			cancel()
			require.Error(t, err, c.name)
			t.Logf("%s with a %v deadline returned in %v: %v\n%s", c.name, timeout, took, err, errorChain(err))
			assert.NotErrorIs(t, err, adaptive.ErrOutcomeUnknown, "%s, %v deadline: a refused dial sent nothing", c.name, timeout)
			assert.Less(t, took, timeout+cleanupBound, "%s, %v deadline: returned by its deadline and the cleanup's bound", c.name, timeout)
		}
	}
}

// errorChain describes err and what it wraps, one per line, with the Op
// of a net.OpError, for a failure's report.
func errorChain(err error) string {
	s := ""
	for depth := 0; err != nil && depth < 20; depth++ {
		s += fmt.Sprintf("  %T %#v\n", err, err)
		var op *net.OpError
		if errors.As(err, &op) {
			s += fmt.Sprintf("    net.OpError Op %q\n", op.Op)
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				s += errorChain(e)
			}
			return s
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return s
		}
	}
	return s
}
