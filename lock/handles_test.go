package lock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// A nil or zero *Lock was not made by TryLock or Lock: its methods return
// ErrInvalidConfig, naming the method, and never ErrNotHeld, which is
// kept for a Lock that held the lock and no longer does.
func TestLockNotMadeByMutexIsInvalid(t *testing.T) {
	ctx := context.Background()
	for _, l := range []*lock.Lock{nil, new(lock.Lock)} {
		for _, s := range []struct {
			method string
			call   func(context.Context) error
		}{{"unlock", l.Unlock}, {"refresh", l.Refresh}} {
			err := s.call(ctx)
			assert.ErrorIs(t, err, lock.ErrInvalidConfig, s.method)
			assert.NotErrorIs(t, err, lock.ErrNotHeld, s.method)
			assert.True(t, strings.HasPrefix(err.Error(), "lock: "+s.method+": "), "%s: %q names the method", s.method, err)
		}
		cause := context.Cause(l.KeepAlive(ctx))
		assert.ErrorIs(t, cause, lock.ErrInvalidConfig)
		assert.NotErrorIs(t, cause, lock.ErrNotHeld)
		select {
		case <-l.Lost():
		default:
			t.Error("a Lock that holds nothing is lost")
		}
		assert.Zero(t, l.Fence())
		assert.Empty(t, l.Token())
	}
}

// Every error, before anything is sent too, names the package, the method
// and the key.
func TestErrorsNameMethodAndKey(t *testing.T) {
	b := redistest.Miniredis(t)
	m, key := newMutex(t, b, time.Minute)
	l, err := m.TryLock(context.Background())
	require.NoError(t, err)
	var nilCtx context.Context
	for _, s := range []struct {
		method string
		err    error
	}{
		{"unlock", l.Unlock(nilCtx)},
		{"refresh", l.Refresh(nilCtx)},
		{"break", m.Break(context.Background(), "")},
		{"break", m.Break(nilCtx, "x")},
	} {
		assert.ErrorIs(t, s.err, lock.ErrInvalidArgument, s.method)
		assert.True(t, strings.HasPrefix(s.err.Error(), "lock: "+s.method+` "`+key+`": `), "%s: %q", s.method, s.err)
	}
	require.NoError(t, l.Unlock(context.Background()))
	_, err = new(lock.Mutex).TryLock(context.Background())
	assert.ErrorIs(t, err, lock.ErrInvalidConfig)
	assert.True(t, strings.HasPrefix(err.Error(), "lock: try lock: "), "%q", err)
}

// Unlock reports success whenever the lock was freed before the lease
// deadline its owner knows, whoever freed it: this owner's own earlier
// run, or an operator's Break. It reports ErrNotHeld once a call of this
// owner's found the lock gone (a Refresh), and after the deadline.
func TestUnlockAfterBreak(t *testing.T) {
	b := redistest.Redis(t)
	ctx := context.Background()
	m, _ := newMutex(t, b, time.Minute)

	broken, err := m.TryLock(ctx)
	require.NoError(t, err)
	require.NoError(t, m.Break(ctx, broken.Token()))
	assert.NoError(t, broken.Unlock(ctx), "broken before its deadline: reported unlocked")
	assert.ErrorIs(t, broken.Unlock(ctx), lock.ErrNotHeld, "unlocked already")

	found, err := m.TryLock(ctx)
	require.NoError(t, err)
	require.NoError(t, m.Break(ctx, found.Token()))
	assert.ErrorIs(t, found.Refresh(ctx), lock.ErrNotHeld, "a Refresh finds it broken")
	assert.ErrorIs(t, found.Unlock(ctx), lock.ErrNotHeld, "after a Refresh found it gone")

	m, _ = newMutex(t, b, 50*time.Millisecond)
	lapsed, err := m.TryLock(ctx)
	require.NoError(t, err)
	require.NoError(t, m.Break(ctx, lapsed.Token()))
	waitServerPast(t, b, time.Now().Add(time.Second), 5*time.Second)
	assert.ErrorIs(t, lapsed.Unlock(ctx), lock.ErrNotHeld, "broken, and past its deadline")
}
