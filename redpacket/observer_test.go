package redpacket_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/observe"
	"github.com/slotlimit/slotlimit/redpacket"
)

// The Observer is told of each call's outcome once, as its last event:
// Create Done, Grab Acquired or Refused, a persister's batch Done with the
// entries written, and Error for anything else.
func TestObserverSeesEachOutcomeOnce(t *testing.T) {
	for _, mk := range []func(*testing.T) *redistest.Backend{redistest.Miniredis, redistest.Redis} {
		b := mk(t)
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			rec := &observetest.Recorder{}
			s := newStore(t, b, redpacket.Config{Observer: rec})
			one := func(what string) observe.Event {
				t.Helper()
				events := rec.Take()
				require.Len(t, events, 1, what)
				e := events[0]
				assert.True(t, e.Kind.Final(), what)
				assert.Equal(t, "redpacket", e.Package, what)
				assert.False(t, e.Start.IsZero(), what)
				return e
			}

			p := redpacket.Packet{ID: "obs", Total: 20, Count: 2}
			require.NoError(t, s.Create(ctx, p))
			e := one("create")
			assert.Equal(t, observe.Done, e.Kind)
			assert.Equal(t, "Create", e.Op)
			assert.Equal(t, "obs", e.Key)
			assert.Equal(t, int64(2), e.Units)
			assert.Equal(t, int64(2), e.Limit)

			require.NoError(t, s.Create(ctx, p), "the same packet again")
			assert.Equal(t, observe.Done, one("create again").Kind)
			err := s.Create(ctx, redpacket.Packet{ID: "obs", Total: 30, Count: 3})
			require.ErrorIs(t, err, redpacket.ErrExists)
			e = one("create of another packet under the id")
			assert.Equal(t, observe.Error, e.Kind)
			assert.Equal(t, err, e.Err)

			for i, user := range []string{"alice", "bob"} {
				c, err := s.Grab(ctx, p.ID, user)
				require.NoError(t, err)
				e = one("grab")
				assert.Equal(t, observe.Acquired, e.Kind)
				assert.Equal(t, "Grab", e.Op)
				assert.Equal(t, user, e.Holder)
				assert.Equal(t, int64(1), e.Units)
				assert.Equal(t, int64(c.Seq), e.InUse)
				assert.Equal(t, int64(i+1), e.InUse)
			}
			_, err = s.Grab(ctx, p.ID, "carol")
			require.ErrorIs(t, err, redpacket.ErrSoldOut)
			e = one("sold out")
			assert.Equal(t, observe.Refused, e.Kind)
			assert.Equal(t, "carol", e.Holder)
			assert.Equal(t, int64(-1), e.InUse)
			_, err = s.Grab(ctx, "no-such", "carol")
			require.ErrorIs(t, err, redpacket.ErrNotFound)
			e = one("not found")
			assert.Equal(t, observe.Error, e.Kind)
			assert.ErrorIs(t, e.Err, redpacket.ErrNotFound)
			_, err = s.Grab(ctx, p.ID, "")
			require.ErrorIs(t, err, redpacket.ErrInvalidArgument)
			assert.Equal(t, observe.Error, one("invalid user").Kind)

			_, _, err = s.Remaining(ctx, p.ID)
			require.NoError(t, err)
			assert.Empty(t, rec.Take(), "a read reports nothing")

			db := sqltest.Database{Name: "sqlite", DB: sqltest.SQLite(t)}
			per := newPersister(t, s, db, redpacket.PersisterConfig{Consumer: "c1"})
			n, err := per.Drain(ctx)
			require.NoError(t, err)
			require.Equal(t, 3, n, "the packet and its two claims")
			e = one("drain")
			assert.Equal(t, observe.Done, e.Kind)
			assert.Equal(t, "Drain", e.Op)
			assert.Equal(t, "c1", e.Holder)
			assert.Equal(t, int64(3), e.Units)
			assert.Contains(t, e.Key, ":log")
		})
	}
}

// A persister's errors reach the Observer, as Error, from Drain and Run.
func TestObserverSeesPersisterErrors(t *testing.T) {
	ctx := context.Background()
	rec := &observetest.Recorder{}
	per, err := redpacket.NewPersister(downClient(t), redpacket.PersisterConfig{
		Store: redpacket.Config{Observer: rec}, DB: sqltest.SQLite(t), Dialect: redpacket.SQLite})
	require.NoError(t, err)
	_, err = per.Drain(ctx)
	require.Error(t, err)
	events := rec.Take()
	require.Len(t, events, 1)
	assert.Equal(t, observe.Error, events[0].Kind)
	assert.Equal(t, "Drain", events[0].Op)
	assert.Equal(t, err, events[0].Err)
}
