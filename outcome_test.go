package slotlimit_test

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// When an acquire's reply is lost, Acquire cannot know whether it took the
// slot, so it releases the holder before returning.
func TestLimiterAcquireUnknownOutcomeReleases(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for i, step := range []struct {
			name   string
			err    func() error
			target error
		}{
			{"connection timeout", func() error { return os.ErrDeadlineExceeded }, os.ErrDeadlineExceeded},
			// go-redis reports a context that ends in flight as an i/o
			// timeout (with ContextTimeoutEnabled; without, it waits for
			// the reply): a bare context error comes only before a send.
			{"ctx ends in flight", func() error { cancel(); return os.ErrDeadlineExceeded }, context.Canceled},
		} {
			l := newLimiter(t, b, testKey(t, b), 1, time.Minute)
			var armed atomic.Bool
			client := newClient(t, b, noRetries)
			client.AddHook(failAfterSend(&armed, step.err))
			faulty := newLimiterOn(t, client, l.Config())

			armed.Store(true)
			_, err := faulty.Acquire(ctx, "d1")
			require.ErrorIs(t, err, step.target, "step %d: %s", i, step.name)
			assert.False(t, armed.Load(), "step %d: the fault struck", i)
			assert.Empty(t, holderIDs(t, l), "step %d: %s: no phantom slot", i, step.name)
		}
	})
}

// A reply from Redis, even an error reply, is a known outcome: Acquire
// returns it and sends no release.
func TestOutcomeKnownOnErrorReply(t *testing.T) {
	b := newMiniredis(t)
	ctx := context.Background()
	key := testKey(t, b)
	require.NoError(t, b.Client.Set(ctx, key, "x", 0).Err())
	client, counts := countedClient(t, b)
	l := newLimiterOn(t, client, slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute})
	_, err := l.Acquire(ctx, "d1")
	var reply redis.Error
	require.True(t, errors.As(err, &reply), "the server's reply is kept: %v", err)
	assert.Equal(t, int64(1), counts.get("acquire"), "the acquire ran")
	assert.Zero(t, counts.get("release"), "no release for a known outcome")
}
