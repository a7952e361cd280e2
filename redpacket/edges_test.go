package redpacket_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/redpacket"
)

// A nil ctx is refused with ErrInvalidArgument by every method that
// takes one, naming the method once, with nothing sent and no panic.
func TestNilContextIsAnInvalidArgument(t *testing.T) {
	b := redistest.Redis(t)
	s := newStore(t, b, redpacket.Config{})
	db := sqltest.SQLite(t)
	p, err := persisterOf(s, redpacket.PersisterConfig{DB: db, Dialect: redpacket.SQLite})
	require.NoError(t, err)
	var nilCtx context.Context
	_, grab := s.Grab(nilCtx, "p1", "u")
	_, _, remaining := s.Remaining(nilCtx, "p1")
	_, drain := p.Drain(nilCtx)
	_, pending := p.Pending(nilCtx)
	_, reconcile := p.Reconcile(nilCtx, "p1")
	for _, tt := range []struct {
		err  error
		want string
	}{
		{s.Create(nilCtx, redpacket.Packet{ID: "p1", Total: 10, Count: 2}), `redpacket: create "p1": invalid argument: `},
		{grab, `redpacket: grab "p1": invalid argument: `},
		{remaining, `redpacket: remaining "p1": invalid argument: `},
		{p.Run(nilCtx), `redpacket: run: invalid argument: `},
		{drain, `redpacket: drain: invalid argument: `},
		{pending, `redpacket: pending: invalid argument: `},
		{reconcile, `redpacket: reconcile "p1": invalid argument: `},
		{redpacket.CreateSchema(nilCtx, db), `redpacket: create schema: invalid argument: `},
	} {
		require.ErrorIs(t, tt.err, redpacket.ErrInvalidArgument, tt.want)
		assert.True(t, strings.HasPrefix(tt.err.Error(), tt.want), "%q, want %q", tt.err, tt.want)
		assert.Equal(t, 1, strings.Count(tt.err.Error(), "redpacket"), "%q", tt.err)
	}
	keys, err := b.Client.Keys(context.Background(), "*"+s.Config().Prefix+"*").Result()
	require.NoError(t, err)
	assert.Empty(t, keys, "nothing was written")
}

// A Grab whose reply is lost once returns its first run's claim at every
// edge: the last share (the re-send finds the packet sold out, and the
// claim). A Grab lost for good fails, and the same Grab again returns the
// claim it took. Each claim is taken and logged once. A Grab refused as
// expired is refused again when sent again, with nothing written.
func TestGrabSentAgainAtTheEdges(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		s, cutter, plain := cutStores(t, b, redpacket.Config{})
		p := redpacket.Packet{ID: "edges", Total: 20, Count: 2, TTL: time.Hour}
		require.NoError(t, plain.Create(ctx, p))
		_, err := plain.Grab(ctx, p.ID, "warm") // the script is cached
		require.NoError(t, err)

		cutter.Arm(1, "evalsha", keyOf(s, "p", p.ID))
		last, err := s.Grab(ctx, p.ID, "last")
		require.NoError(t, err, "the re-send finds the sold-out packet and the claim")
		assert.Equal(t, 1, cutter.Cuts())
		assert.Equal(t, 2, last.Seq)
		assert.Equal(t, 1, logged(t, b.Client, s, "c", p.ID, "last"))

		q := redpacket.Packet{ID: "lost", Total: 30, Count: 3, TTL: time.Hour}
		require.NoError(t, plain.Create(ctx, q))
		cutter.Arm(10, "evalsha", keyOf(s, "p", q.ID))
		_, err = s.Grab(ctx, q.ID, "alice")
		require.Error(t, err, "every reply lost: the outcome is unknown")
		assert.NotErrorIs(t, err, redpacket.ErrSoldOut)
		assert.ErrorContains(t, err, `redpacket: grab "lost"`)
		cutter.Arm(0)
		again, err := s.Grab(ctx, q.ID, "alice")
		require.NoError(t, err)
		assert.Equal(t, 1, again.Seq, "the share the lost call took")
		shares, amount, err := plain.Remaining(ctx, q.ID)
		require.NoError(t, err)
		assert.Equal(t, 2, shares, "one share taken")
		assert.Equal(t, q.Total-again.Amount, amount)
		assert.Equal(t, 1, logged(t, b.Client, s, "c", q.ID, "alice"))

		e := redpacket.Packet{ID: "expiring", Total: 30, Count: 3, TTL: time.Hour}
		require.NoError(t, plain.Create(ctx, e))
		require.NoError(t, b.Client.HSet(ctx, keyOf(s, "p", e.ID), "expired", "1").Err(), "expired, as a sweep marks it")
		_, err = s.Grab(ctx, e.ID, "bob")
		assert.ErrorIs(t, err, redpacket.ErrExpired)
		cutter.Arm(1, "evalsha", keyOf(s, "p", e.ID))
		_, err = s.Grab(ctx, e.ID, "bob")
		assert.ErrorIs(t, err, redpacket.ErrExpired, "refused again, as the first run was")
		assert.Zero(t, logged(t, b.Client, s, "c", e.ID, "bob"))
	})
}

// A persister's errors name the method that met them, Drain, Run (to
// OnError) or Pending, and the package once, with the step that failed.
func TestPersisterErrorsNameTheMethod(t *testing.T) {
	ctx := context.Background()
	s := mustNew(t, downClient(t))
	var mu sync.Mutex
	var reported []error
	p, err := persisterOf(s, redpacket.PersisterConfig{DB: sqltest.SQLite(t), Dialect: redpacket.SQLite,
		OnError: func(err error) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, err)
		}})
	require.NoError(t, err)
	_, drain := p.Drain(ctx)
	_, pending := p.Pending(ctx)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	require.NoError(t, p.Run(short))
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, reported)
	for _, tt := range []struct {
		err  error
		want string
	}{
		{drain, `redpacket: drain "{redpacket:0}:redpacket:log": group: `},
		{pending, `redpacket: pending "{redpacket:0}:redpacket:log": `},
		{reported[0], `redpacket: run "{redpacket:0}:redpacket:log": group: `},
	} {
		require.Error(t, tt.err, tt.want)
		assert.True(t, strings.HasPrefix(tt.err.Error(), tt.want), "%q, want %q", tt.err, tt.want)
		assert.Equal(t, 1, strings.Count(tt.err.Error(), "redpacket: "), "%q", tt.err)
	}
}
