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

// failAfterSend is a go-redis hook that lets the next script call that runs
// on the server do so, and then reports an error instead of its reply, as a connection
// that breaks after the call was sent would.
type failAfterSend struct {
	armed atomic.Bool
	err   func() error
}

func (h *failAfterSend) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *failAfterSend) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *failAfterSend) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		name := cmd.Name()
		if err == nil && (name == "evalsha" || name == "eval") && h.armed.CompareAndSwap(true, false) {
			err = h.err()
			cmd.SetErr(err)
		}
		return err
	}
}

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
			{"ctx ends in flight", func() error { cancel(); return context.Canceled }, context.Canceled},
		} {
			l := newLimiter(t, b, testKey(t, b), 1, time.Minute)
			hook := &failAfterSend{err: step.err}
			client := redis.NewClient(b.client.(*redis.Client).Options())
			t.Cleanup(func() { client.Close() })
			client.AddHook(hook)
			faulty, err := slotlimit.New(client, l.Config())
			require.NoError(t, err)

			hook.armed.Store(true)
			_, err = faulty.Acquire(ctx, "d1")
			require.ErrorIs(t, err, step.target, "step %d: %s", i, step.name)
			assert.False(t, hook.armed.Load(), "step %d: the fault struck", i)
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
	require.NoError(t, b.client.Set(ctx, key, "x", 0).Err())
	l := newLimiter(t, b, key, 1, time.Minute)
	var released atomic.Int32
	b.client.AddHook(&countRelease{n: &released})
	_, err := l.Acquire(ctx, "d1")
	var reply redis.Error
	require.True(t, errors.As(err, &reply), "the server's reply is kept: %v", err)
	assert.Zero(t, released.Load(), "no release for a known outcome")
}

// countRelease counts script calls with one key and one argument: releases.
type countRelease struct{ n *atomic.Int32 }

func (h *countRelease) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *countRelease) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *countRelease) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); (name == "evalsha" || name == "eval") && len(cmd.Args()) == 5 {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
