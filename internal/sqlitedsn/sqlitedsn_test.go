package sqlitedsn_test

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/sqlitedsn"
)

// DSN names a relative path's file by its absolute path, in a file: URI
// whose query holds every pragma.
func TestDSNNamesTheAbsoluteFile(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("dir", "a b#c.db"))
	require.NoError(t, err)
	u, err := url.Parse(sqlitedsn.DSN(filepath.Join("dir", "a b#c.db")))
	require.NoError(t, err)
	assert.Equal(t, "file", u.Scheme)
	assert.True(t, strings.HasSuffix(u.Path, filepath.ToSlash(abs)), "%q names %q", u.Path, abs) // after a "/" on Windows
	q := u.Query()
	assert.Equal(t, []string{"busy_timeout(5000)", "journal_mode(WAL)"}, q["_pragma"])
	assert.Equal(t, "immediate", q.Get("_txlock"))
}
