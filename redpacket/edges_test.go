package redpacket_test

import (
	"context"
	"strings"
	"testing"

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
	p, err := s.NewPersister(redpacket.PersisterConfig{DB: db, Dialect: redpacket.SQLite})
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
