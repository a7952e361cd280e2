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

// hasPrefix asserts that err begins with prefix, and names the package
// once.
func hasPrefix(t *testing.T, err error, prefix string) {
	t.Helper()
	if assert.Error(t, err, prefix) {
		assert.True(t, strings.HasPrefix(err.Error(), prefix), "%q begins %q", err, prefix)
		assert.Equal(t, 1, strings.Count(err.Error(), "redpacket: "), "%q names the package once", err)
	}
}

// An error of the database that CreateSchema meets names the package and
// the method.
func TestCreateSchemaErrorNamesTheMethod(t *testing.T) {
	db := sqltest.SQLite(t)
	require.NoError(t, db.Close())
	hasPrefix(t, redpacket.CreateSchema(context.Background(), db), "redpacket: create schema: ")
}

// An error of the database that Drain meets names the package, the
// method and the log it was writing.
func TestDrainDatabaseErrorNamesTheLog(t *testing.T) {
	ctx := context.Background()
	b := redistest.Miniredis(t)
	s := newStore(t, b, redpacket.Config{})
	p, err := persisterOf(s, redpacket.PersisterConfig{DB: sqltest.SQLite(t), Dialect: redpacket.SQLite}) // no schema
	require.NoError(t, err)
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "p1", Total: 10, Count: 2}))
	_, err = p.Drain(ctx)
	hasPrefix(t, err, `redpacket: drain "`+keyOf(s, "log", "")+`": write `)
}

// Every method of a zero or nil Store or Persister returns
// ErrInvalidConfig, naming the method and no key, with nothing sent.
func TestUnusableValuesNameTheMethod(t *testing.T) {
	ctx := context.Background()
	for name, s := range map[string]*redpacket.Store{"nil": nil, "zero": {}} {
		_, grab := s.Grab(ctx, "p1", "u")
		_, _, remaining := s.Remaining(ctx, "p1")
		_, inspect := s.Inspect(ctx, "p1")
		for prefix, err := range map[string]error{
			"redpacket: create: ":    s.Create(ctx, redpacket.Packet{ID: "p1", Total: 1, Count: 1}),
			"redpacket: grab: ":      grab,
			"redpacket: remaining: ": remaining,
			"redpacket: inspect: ":   inspect,
		} {
			assert.ErrorIs(t, err, redpacket.ErrInvalidConfig, name)
			hasPrefix(t, err, prefix+"invalid config: not made by New")
		}
	}
	for name, p := range map[string]*redpacket.Persister{"nil": nil, "zero": {}} {
		_, drain := p.Drain(ctx)
		_, pending := p.Pending(ctx)
		_, reconcile := p.Reconcile(ctx, "p1")
		for prefix, err := range map[string]error{
			"redpacket: run: ":       p.Run(ctx),
			"redpacket: drain: ":     drain,
			"redpacket: pending: ":   pending,
			"redpacket: reconcile: ": reconcile,
		} {
			assert.ErrorIs(t, err, redpacket.ErrInvalidConfig, name)
			hasPrefix(t, err, prefix+"invalid config: not made by New")
		}
	}
}
