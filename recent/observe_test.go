package recent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/observe"
	"github.com/slotlimit/slotlimit/recent"
)

// The Observer is told of each Add and Remove sent, once, as its final
// event: Done with the values added or counted, or Error with the error.
// Reads and calls refused before anything is sent report nothing.
func TestObserverReportsEachWriteOnce(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rec := &observetest.Recorder{}
		l := newList(t, b, recent.Config{Max: 3, Observer: rec})
		key := l.Config().Key

		require.NoError(t, l.Add(ctx, "a", "b"))
		n, err := l.Remove(ctx, "a", "absent")
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		_, err = l.Items(ctx, 0, 3)
		require.NoError(t, err)
		_, err = l.Len(ctx)
		require.NoError(t, err)
		require.NoError(t, l.Add(ctx))
		require.Error(t, l.Add(ctx, make([]string, recent.MaxBatch+1)...))

		events := rec.Take()
		require.Equal(t, []observe.Kind{observe.Done, observe.Done}, observetest.Kinds(events))
		for i, want := range []struct {
			op    string
			units int64
		}{{"Add", 2}, {"Remove", 1}} {
			e := events[i]
			assert.Equal(t, "recent", e.Package, "event %d", i)
			assert.Equal(t, want.op, e.Op, "event %d", i)
			assert.Equal(t, key, e.Key, "event %d", i)
			assert.Equal(t, want.units, e.Units, "event %d", i)
			assert.Equal(t, int64(-1), e.InUse, "event %d", i)
			assert.NoError(t, e.Err, "event %d", i)
			assert.False(t, e.Start.IsZero(), "event %d", i)
			assert.GreaterOrEqual(t, e.Duration, time.Duration(0), "event %d", i)
		}

		// A Redis error reply is reported as an Error.
		other := newList(t, b, recent.Config{Max: 3, Observer: rec})
		require.NoError(t, b.Client.Set(ctx, recent.DataKey(other), "x", 0).Err())
		addErr := other.Add(ctx, "a")
		require.Error(t, addErr)
		_, removeErr := other.Remove(ctx, "a", "b")
		require.Error(t, removeErr)
		events = rec.Take()
		require.Equal(t, []observe.Kind{observe.Error, observe.Error}, observetest.Kinds(events))
		assert.Equal(t, addErr, events[0].Err)
		assert.Equal(t, "Add", events[0].Op)
		assert.Equal(t, removeErr, events[1].Err)
		assert.Equal(t, int64(2), events[1].Units, "the values given")
	})
}

// A re-sent Add or Remove is still one call: one final event, the
// Remove's with the count it returned; a reply lost for good is an Error
// matching ErrOutcomeUnknown.
func TestObserverOneEventPerResentCall(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rec := &observetest.Recorder{}
		l, cutter := cutList(t, b, recent.Config{Max: 3, Observer: rec})
		key := l.Config().Key
		require.NoError(t, l.Add(ctx, "a"))
		rec.Take()

		cutter.Arm(1, "evalsha", key)
		require.NoError(t, l.Add(ctx, "b", "c"))
		cutter.Arm(1, "evalsha", key)
		n, err := l.Remove(ctx, "b")
		require.NoError(t, err)
		require.Equal(t, 2, cutter.Cuts())
		events := rec.Take()
		require.Equal(t, []observe.Kind{observe.Done, observe.Done}, observetest.Kinds(events))
		assert.Equal(t, int64(2), events[0].Units)
		assert.Equal(t, n, events[1].Units, "the count Remove returned")

		cutter.Arm(10, "evalsha", key)
		err = l.Add(ctx, "d")
		require.ErrorIs(t, err, recent.ErrOutcomeUnknown)
		cutter.Arm(0)
		events = rec.Take()
		require.Equal(t, []observe.Kind{observe.Error}, observetest.Kinds(events))
		assert.ErrorIs(t, events[0].Err, recent.ErrOutcomeUnknown)
	})
}
