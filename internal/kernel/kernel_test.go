package kernel_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/kernel"
)

var errs = kernel.NewErrors("lock")

func TestWords(t *testing.T) {
	for in, want := range map[string]string{
		"TryAcquire": "try acquire", "Unlock": "unlock", "AcquireN": "acquire n", "PushBatch": "push batch",
	} {
		assert.Equal(t, want, kernel.Words(in), in)
	}
}

// Every error names the package once, the method and the key, and wraps
// the sentinel it reports.
func TestErrorsNamePackageMethodAndKey(t *testing.T) {
	ctx := context.Background()
	err := errs.Op("Refresh", "orders:42", errs.NotHeld)
	assert.Equal(t, `lock: refresh "orders:42": not held`, err.Error())
	assert.ErrorIs(t, err, errs.NotHeld)

	err = errs.Check(ctx, false, "TryLock", "k")
	assert.Equal(t, "lock: try lock: invalid config: not made by New", err.Error())
	assert.ErrorIs(t, err, errs.InvalidConfig)

	//lint:ignore SA1012 a nil ctx is the case under test
	err = errs.Check(nil, true, "TryLock", "k")
	assert.Equal(t, `lock: try lock "k": invalid argument: nil context`, err.Error())
	assert.ErrorIs(t, err, errs.InvalidArgument)
	assert.NoError(t, errs.Check(ctx, true, "TryLock", "k"))

	holder := errs.Kind("invalid holder")
	assert.Equal(t, "lock: invalid holder", holder.Error())
	assert.ErrorIs(t, errs.Op("Lock", "k", holder), errs.InvalidArgument)
	assert.NotErrorIs(t, errs.InvalidArgument, holder)
}

// A sent call whose answer was lost matches the one ErrOutcomeUnknown; an
// answer, or nothing sent, does not.
func TestCallMatchesOutcomeUnknown(t *testing.T) {
	ctx := context.Background()
	assert.ErrorIs(t, errs.Call(ctx, "Unlock", "k", os.ErrDeadlineExceeded), kernel.ErrOutcomeUnknown)
	assert.NotErrorIs(t, errs.Call(ctx, "Unlock", "k", redis.Nil), kernel.ErrOutcomeUnknown)
	assert.NotErrorIs(t, errs.Op("Unlock", "k", errs.NotHeld), kernel.ErrOutcomeUnknown)
	assert.NoError(t, errs.Call(ctx, "Unlock", "k", nil))
}

func TestNewChecksWhatEveryPackageChecks(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	for name, c := range map[string]struct {
		client redis.UniversalClient
		s      kernel.Settings
	}{
		"nil client":        {nil, kernel.Settings{}},
		"typed nil client":  {(*redis.Client)(nil), kernel.Settings{}},
		"empty key":         {client, kernel.Settings{Keyed: true}},
		"brace, no tag":     {client, kernel.Settings{Keyed: true, Key: "a}b"}},
		"another's key":     {client, kernel.Settings{Keyed: true, Key: "{k}/recent"}},
		"a limiter's queue": {client, kernel.Settings{Keyed: true, Key: "{k}:q"}},
		"negative replicas": {client, kernel.Settings{Replicas: -1}},
		"negative timeout":  {client, kernel.Settings{ReplicaTimeout: -time.Second}},
		"sub-ms timeout":    {client, kernel.Settings{ReplicaTimeout: time.Microsecond}},
	} {
		_, err := errs.New(c.client, c.s)
		assert.ErrorIs(t, err, errs.InvalidConfig, name)
	}

	b, err := errs.New(client, kernel.Settings{Keyed: true, Key: "orders", Sides: []string{"lock:q"}, Replicas: 1})
	require.NoError(t, err)
	assert.Equal(t, []string{"orders", "{orders}/lock:q"}, b.Keys)
	assert.Equal(t, kernel.DefaultReplicaTimeout, b.ReplicaTimeout)
	assert.Equal(t, kernel.DefaultReplicaTimeout, b.Runner.ReplicaTimeout)
	assert.True(t, b.Usable())
	var zero kernel.Base
	assert.False(t, zero.Usable())

	b, err = errs.New(client, kernel.Settings{})
	require.NoError(t, err, "a package whose calls name their keys needs no Key")
	assert.Nil(t, b.Keys)
}

func TestDuration(t *testing.T) {
	assert.NoError(t, errs.Duration("TTL", 0, time.Hour))
	assert.NoError(t, errs.Duration("TTL", time.Millisecond, time.Hour))
	for _, d := range []time.Duration{-1, time.Microsecond, time.Hour + 1} {
		err := errs.Duration("TTL", d, time.Hour)
		assert.ErrorIs(t, err, errs.InvalidConfig, d)
		assert.Contains(t, err.Error(), "TTL is ", d)
	}
}

func TestReply(t *testing.T) {
	r := kernel.ReadReply([]any{int64(1), int64(7), "x"})
	assert.Equal(t, int64(1), r.Status())
	assert.Equal(t, 2, r.Len())
	assert.Equal(t, int64(7), r.Int(0))
	assert.Equal(t, "x", r.String(1))
	assert.NoError(t, r.Err())

	for _, bad := range []any{nil, int64(1), []any{}, []any{"1"}} {
		r := kernel.ReadReply(bad)
		assert.Error(t, r.Err(), "%v", bad)
	}
	r = kernel.ReadReply([]any{int64(1), "x"})
	r.Int(0)
	assert.Error(t, r.Err(), "a field of another type")
	r = kernel.ReadReply([]any{int64(1)})
	r.String(3)
	assert.Error(t, r.Err(), "a field that is missing")
	r = kernel.ReadReply([]any{int64(9)})
	r.Want(r.Status() <= 2)
	assert.Error(t, r.Err(), "a status the script never answers")
}

// An error's words cost no allocation once its method has been named.
func TestWordsAllocateOnce(t *testing.T) {
	kernel.Words("TryLock")
	assert.Zero(t, testing.AllocsPerRun(100, func() { kernel.Words("TryLock") }))
}
