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
