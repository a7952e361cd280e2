package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
	"github.com/slotlimit/slotlimit/observe"
)

// final asserts that events is one final event of kind from op by owner.
func final(t *testing.T, events []observe.Event, kind observe.Kind, op, owner string) observe.Event {
	t.Helper()
	require.Len(t, events, 1, "%v", events)
	e := events[0]
	assert.Equal(t, kind, e.Kind)
	assert.Equal(t, "lock", e.Package)
	assert.Equal(t, op, e.Op)
	assert.Equal(t, owner, e.Holder)
	assert.Positive(t, e.Duration)
	return e
}

// Each call on a lock reports one final event as it returns; a Lock that
// waits reports Waited and HandedOver before Acquired; a lock found gone
// reports LeaseLost once.
func TestObserverReportsEachCallOnce(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rec := &observetest.Recorder{}
		key := b.Key(t, "lock-test:")
		m := newMutexOn(t, b.Client, lock.Config{Key: key, TTL: 3 * time.Second, Observer: rec})

		owner, err := m.TryLock(ctx)
		require.NoError(t, err)
		e := final(t, rec.Take(), observe.Acquired, "TryLock", owner.Token())
		assert.Equal(t, key, e.Key)
		assert.Equal(t, int64(1), e.InUse)

		_, err = m.TryLock(ctx)
		require.ErrorIs(t, err, lock.ErrNotObtained)
		refused := rec.Take()
		require.Len(t, refused, 1)
		assert.Equal(t, observe.Refused, refused[0].Kind)
		assert.Equal(t, int64(1), refused[0].InUse, "refused with the lock in use")

		require.NoError(t, owner.Refresh(ctx))
		assert.True(t, final(t, rec.Take(), observe.Renewed, "Refresh", owner.Token()).Held)

		// The waiter's tries are counted: it stamps its first refusal before
		// it tries again (within a second), and the owner holds the lock
		// for hold from that second try on, so that the wait the waiter
		// reports is at least hold, however slow the machine.
		client := b.NewClient(t)
		tries := &countEvals{}
		client.AddHook(tries)
		wm := newMutexOn(t, client, lock.Config{Key: key, TTL: 3 * time.Second, Observer: rec})
		const hold = 200 * time.Millisecond
		var unlockSent time.Time
		unlocked := make(chan struct{})
		go func() {
			defer close(unlocked)
			for give := time.Now().Add(10 * time.Second); tries.n.Load() < 2 && time.Now().Before(give); {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(hold)
			unlockSent = time.Now()
			owner.Unlock(ctx) //nolint:errcheck // checked by the events
		}()
		waiter, err := wm.Lock(ctx)
		returned := time.Now()
		require.NoError(t, err)
		<-unlocked // Lock may return before Unlock does
		require.GreaterOrEqual(t, tries.n.Load(), int64(2), "the waiter tried again")
		var mine, others []observe.Event
		for _, e := range rec.Take() {
			if e.Holder == waiter.Token() {
				mine = append(mine, e)
			} else {
				others = append(others, e)
			}
		}
		require.Equal(t, []observe.Kind{observe.Waited, observe.HandedOver, observe.Acquired}, observetest.Kinds(mine), "%v", mine)
		assert.GreaterOrEqual(t, mine[0].Duration, hold, "from the first refusal to the return")
		if b.Real { // the hand-off's time is the server's clock, in ms
			assert.LessOrEqual(t, mine[1].Duration, returned.Sub(unlockSent)+time.Millisecond, "from the unlock to the return, not from some other time")
		}
		assert.True(t, final(t, others, observe.Released, "Unlock", owner.Token()).Held)

		work := waiter.KeepAlive(ctx)
		require.NoError(t, b.Client.Del(ctx, key).Err()) // broken behind its back
		select {
		case <-work.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the lock was not found lost")
		}
		var lost []observe.Event
		for _, e := range rec.Take() {
			if e.Kind == observe.LeaseLost {
				lost = append(lost, e)
			}
		}
		require.Len(t, lost, 1)
		assert.Equal(t, waiter.Token(), lost[0].Holder)
		assert.True(t, errors.Is(lost[0].Err, lock.ErrNotHeld))
		assert.ErrorIs(t, waiter.Unlock(ctx), lock.ErrNotHeld)
		assert.False(t, final(t, rec.Take(), observe.Released, "Unlock", waiter.Token()).Held)

		// Break reports Released, Held when it broke the owner's lock.
		broken, err := m.TryLock(ctx)
		require.NoError(t, err)
		rec.Take()
		require.NoError(t, m.Break(ctx, broken.Token()))
		assert.True(t, final(t, rec.Take(), observe.Released, "Break", broken.Token()).Held)
		require.ErrorIs(t, m.Break(ctx, broken.Token()), lock.ErrNotHeld)
		assert.False(t, final(t, rec.Take(), observe.Released, "Break", broken.Token()).Held)

		// A Redis error reply is reported as Error, with the call's error.
		require.NoError(t, b.Client.RPush(ctx, key, "x").Err())
		_, err = m.TryLock(ctx)
		require.Error(t, err)
		events := rec.Take()
		require.Len(t, events, 1)
		assert.Equal(t, observe.Error, events[0].Kind)
		assert.Equal(t, "TryLock", events[0].Op)
		assert.Equal(t, err, events[0].Err)
	})
}

// Calls refused before anything is sent report nothing.
func TestObserverIsNotToldOfInvalidCalls(t *testing.T) {
	b := redistest.Miniredis(t)
	rec := &observetest.Recorder{}
	m := newMutexOn(t, b.Client, lock.Config{Key: b.Key(t, "lock-test:"), Observer: rec})
	var nilCtx context.Context
	_, err := m.TryLock(nilCtx)
	require.ErrorIs(t, err, lock.ErrInvalidArgument)
	require.ErrorIs(t, m.Break(context.Background(), ""), lock.ErrInvalidArgument)
	assert.Empty(t, rec.Take())
}
