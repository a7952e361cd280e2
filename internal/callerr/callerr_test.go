package callerr_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"

	"github.com/slotlimit/slotlimit/internal/callerr"
)

func TestOutcomeUnknown(t *testing.T) {
	steps := []struct {
		name    string
		err     error
		unknown bool
	}{
		{"an error reply", redis.ErrNoScript, false},
		{"a nil reply", redis.Nil, false},
		{"a key of another type", reply("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
		{"a user without the right", reply("NOPERM this user has no permissions to run the 'evalsha' command"), false},
		{"an argument error", reply("ERR wrong number of arguments"), false},
		{"WAIT unblocked by a failover", reply("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"), true},
		{"a server loading, after a try that may have run", reply("LOADING Redis is loading the dataset in memory"), true},
		{"a redirect, after a try that may have run", reply("MOVED 3999 127.0.0.1:6381"), true},
		{"too many clients", reply("ERR max number of clients reached"), true},
		{"a context that ended, no try sent", callerr.Sent(context.Canceled, false), false},
		{"a refusal after a try that may have written", callerr.Sent(redis.ErrNoScript, true), true},
		{"a wrapped error reply", fmt.Errorf("op: %w", redis.ErrNoScript), false},
		{"no connection from the pool", redis.ErrPoolTimeout, false},
		{"a closed client", redis.ErrClosed, false},
		{"a failed dial", &net.OpError{Op: "dial", Err: errors.New("refused")}, false},
		{"a failed read", &net.OpError{Op: "read", Err: errors.New("reset")}, true},
		{"an i/o timeout", os.ErrDeadlineExceeded, true},
		{"a context that ended", context.Canceled, true},
		{"a reply of an unexpected form", callerr.UnexpectedReply("x"), false},
	}
	for i, s := range steps {
		assert.Equal(t, s.unknown, callerr.OutcomeUnknown(s.err), "step %d: %s", i, s.name)
	}
}

func TestContextDoneCountsPassedDeadline(t *testing.T) {
	assert.NoError(t, callerr.ContextDone(context.Background()))
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	assert.ErrorIs(t, callerr.ContextDone(ctx), context.DeadlineExceeded)
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, callerr.ContextDone(ctx), context.Canceled)
}

func TestCallMatchesContextWhenItCutTheCallShort(t *testing.T) {
	err := callerr.Op("pkg", "acquire", "k", redis.ErrNoScript)
	assert.EqualError(t, err, `pkg: acquire "k": `+redis.ErrNoScript.Error())
	assert.ErrorIs(t, err, redis.ErrNoScript)

	ctx, cancel := context.WithCancel(context.Background())
	assert.NotErrorIs(t, callerr.Call(ctx, "pkg", "acquire", "k", os.ErrDeadlineExceeded), context.Canceled, "ctx not done")
	cancel()
	err = callerr.Call(ctx, "pkg", "acquire", "k", os.ErrDeadlineExceeded)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.NotErrorIs(t, callerr.Call(ctx, "pkg", "acquire", "k", redis.ErrNoScript), context.Canceled, "a reply is a known outcome")
	assert.EqualError(t, callerr.Call(ctx, "pkg", "acquire", "k", context.Canceled), `pkg: acquire "k": context canceled`)
}

// An error names its package once, though the error it wraps is one of
// the package's own, and still matches it.
func TestOpNamesThePackageOnce(t *testing.T) {
	errNotHeld := errors.New("lock: not held")
	err := callerr.Op("lock", "refresh", "k", errNotHeld)
	assert.Equal(t, `lock: refresh "k": not held`, err.Error())
	assert.ErrorIs(t, err, errNotHeld)

	other := errors.New("redis: nil")
	assert.Equal(t, `lock: refresh "k": redis: nil`, callerr.Op("lock", "refresh", "k", other).Error())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = callerr.Call(ctx, "lock", "refresh", "k", os.ErrDeadlineExceeded)
	assert.Equal(t, `lock: refresh "k": context canceled: i/o timeout`, err.Error())
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
}

// A call's error matches the module's ErrOutcomeUnknown exactly when the
// call was sent and no answer came.
func TestCallMatchesOutcomeUnknown(t *testing.T) {
	ctx := context.Background()
	target := callerr.ErrOutcomeUnknown
	assert.ErrorIs(t, callerr.Call(ctx, "lock", "unlock", "k", os.ErrDeadlineExceeded), target)
	assert.ErrorIs(t, callerr.Call(ctx, "lock", "unlock", "k", fmt.Errorf("read: %w", net.ErrClosed)), target)
	assert.NotErrorIs(t, callerr.Call(ctx, "lock", "unlock", "k", redis.Nil), target, "a reply is a known outcome")
	assert.NotErrorIs(t, callerr.Call(ctx, "lock", "unlock", "k", &net.OpError{Op: "dial", Err: errors.New("refused")}), target, "never sent")
	assert.NotErrorIs(t, callerr.Op("lock", "unlock", "k", errors.New("lock: not held")), target)
	assert.NotErrorIs(t, callerr.Call(ctx, "lock", "unlock", "k", os.ErrDeadlineExceeded), errors.New("slotlimit: outcome unknown"),
		"only the one value matches, not an error of the same text")
}

// An error with no key names the package and the operation only.
func TestMethodNamesNoKey(t *testing.T) {
	err := callerr.Method("lock", "refresh", errors.New("lock: invalid config"))
	assert.Equal(t, "lock: refresh: invalid config", err.Error())
}

// A reply is an error reply as Redis sends it.
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}
