package delayqueue_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// New refuses a Config it cannot work with, and sends nothing, even given
// a client it could reach. (The conformance suite checks the nil
// clients.)
func TestNewSendsNothing(t *testing.T) {
	b := redistest.Miniredis(t)
	client, count := countedClient(t, b)
	_, err := delayqueue.New(client, delayqueue.Config{})
	assert.ErrorIs(t, err, delayqueue.ErrInvalidConfig)
	_, err = delayqueue.New(client, delayqueue.Config{Key: "k"})
	assert.NoError(t, err)
	assert.Zero(t, count.Commands(), "New sends nothing")
}

// ErrOutcomeUnknown is the module's one value.
func TestErrOutcomeUnknownIsShared(t *testing.T) {
	assert.ErrorIs(t, delayqueue.ErrOutcomeUnknown, slotlimit.ErrOutcomeUnknown)
	assert.ErrorIs(t, slotlimit.ErrOutcomeUnknown, delayqueue.ErrOutcomeUnknown)
}

// Known outcomes the conformance suite does not make do not match
// ErrOutcomeUnknown: invalid input, a Poll whose ctx ended before it sent
// anything, and one whose ctx ended while it slept. (The suite checks
// lost replies, ErrNotHeld, nil values and WRONGTYPE.)
func TestKnownOutcomesAreNotOutcomeUnknown(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := newQueue(t, b, time.Minute, 0)
		_, err := q.Push(ctx, nil, -time.Second)
		assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument)
		assert.NotErrorIs(t, err, delayqueue.ErrOutcomeUnknown)

		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		_, err = q.Poll(cancelled)
		assert.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, delayqueue.ErrOutcomeUnknown, "a Poll that sent nothing")
		// A Poll whose ctx ends once its registering call, the second, is
		// answered: it ends while it sleeps, whatever the machine's speed (a
		// deadline of its own could end it with a call on the wire).
		sleeping, stop := context.WithTimeout(ctx, 10*time.Second) // a bound for gross failures
		defer stop()
		hooked := b.NewClient(t)
		hooked.AddHook(&cancelOnReply{hash: delayqueue.ScriptHash("poll"), nth: 2, cancel: stop})
		require.NoError(t, delayqueue.LoadScripts(ctx, hooked))
		_, err = newQueueOn(t, hooked, q.Config()).Poll(sleeping)
		assert.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, delayqueue.ErrOutcomeUnknown, "a Poll that ended while it slept")
	})
}

// cancelOnReply is a go-redis hook that calls cancel once the nth EVALSHA
// of the script hash has been answered, before its caller sees the reply.
type cancelOnReply struct {
	hash   string
	nth    int64
	cancel context.CancelFunc
	calls  atomic.Int64
}

func (h *cancelOnReply) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *cancelOnReply) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *cancelOnReply) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if args := cmd.Args(); cmd.Name() == "evalsha" && len(args) > 1 && args[1] == h.hash && h.calls.Add(1) == h.nth {
			h.cancel()
		}
		return err
	}
}
