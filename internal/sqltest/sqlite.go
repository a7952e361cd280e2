package sqltest

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/slotlimit/slotlimit/internal/sqlitedsn"
)

// openTimeout bounds the first connection of a *sql.DB opened here.
const openTimeout = 10 * time.Second

// SQLiteDSN returns the DSN, for the "sqlite" driver, of the SQLite
// database in the file at path, created if missing: a file: URI, with
// path made absolute. Every *sql.DB opened with it, in this process or
// another, waits for the others' writes instead of failing with
// SQLITE_BUSY: see SQLite. It is sqlitedsn.DSN, which code outside tests
// calls directly.
func SQLiteDSN(path string) string {
	return sqlitedsn.DSN(path)
}

// SQLite returns a *sql.DB, with the embedded "sqlite" driver
// (modernc.org/sqlite), on a new database in a file under tb.TempDir(),
// closed when tb ends. Its connections, and those of any *sql.DB opened
// on the same file with SQLiteDSN, wait up to 5s for one another instead
// of failing with SQLITE_BUSY, run in WAL mode, and begin every
// transaction with BEGIN IMMEDIATE, so that transactions on the file run
// one at a time. PRAGMA database_list names the file.
func SQLite(tb testing.TB) *sql.DB {
	tb.Helper()
	return open(tb, "sqlite", tempSQLiteDSN(tb))
}

// tempSQLiteDSN returns the DSN of a new database file under tb.TempDir().
func tempSQLiteDSN(tb testing.TB) string {
	return SQLiteDSN(filepath.Join(tb.TempDir(), "test.db"))
}

// open opens dsn with driver, checks that it connects, and closes it when
// tb ends.
func open(tb testing.TB, driver, dsn string) *sql.DB {
	tb.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		tb.Fatalf("sqltest: open %s: %v", dsn, err)
	}
	tb.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		tb.Fatalf("sqltest: connect to %s: %v", dsn, err)
	}
	return db
}
