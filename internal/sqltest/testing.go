package sqltest

import (
	"database/sql"
	"os"
	"sync"
	"testing"

	"github.com/slotlimit/slotlimit/internal/skipnote"
)

var shared struct {
	once   sync.Once
	server *Postgres
	err    error
}

// sharedPostgres returns the server started once per test binary, or
// skips or fails tb when it could not be started.
func sharedPostgres(tb testing.TB) *Postgres {
	tb.Helper()
	shared.once.Do(func() { shared.server, shared.err = StartPostgres() })
	if shared.err != nil {
		unavailable(tb, shared.err)
	}
	return shared.server
}

// PostgresDB returns a *sql.DB on a database of tb's own (see
// Postgres.Open), on a PostgreSQL server started once per test binary and
// shared by its tests, which must not kill it. When the server cannot be
// started, PostgresDB skips tb, or fails it when
// SLOTLIMIT_REQUIRE_POSTGRES=1.
func PostgresDB(tb testing.TB) *sql.DB {
	tb.Helper()
	return sharedPostgres(tb).Open(tb)
}

// StartPostgresT starts a PostgreSQL server of tb's own (see
// StartPostgres), and closes it when tb ends. Unlike the shared server of
// PostgresDB, tb may kill and restart it. When it cannot be started,
// StartPostgresT skips tb, or fails it when SLOTLIMIT_REQUIRE_POSTGRES=1.
func StartPostgresT(tb testing.TB) *Postgres {
	tb.Helper()
	p, err := StartPostgres()
	if err != nil {
		unavailable(tb, err)
	}
	tb.Cleanup(p.Close)
	return p
}

// unavailable skips tb because PostgreSQL could not be had, or fails it
// when SLOTLIMIT_REQUIRE_POSTGRES=1.
func unavailable(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv(RequireEnv) == "1" {
		tb.Fatalf("PostgreSQL required (%s=1) but unavailable: %v", RequireEnv, err)
	}
	skipnote.Skip(tb, "PostgreSQL", err, "install PostgreSQL's server, or set "+RequireEnv+"=1 to fail instead")
}

// Shutdown stops the shared server of PostgresDB and EachDatabase, if it
// was started, and reports in one line the tests skipped for want of a
// server, even without -v. Call it from TestMain after m.Run.
func Shutdown() {
	skipnote.Report()
	if shared.server != nil {
		shared.server.Close()
	}
}

// A Database is one of the databases EachDatabase runs a test on.
type Database struct {
	Name   string  // "sqlite" or "postgres", the subtest's name
	Driver string  // the database/sql driver: "sqlite" or "pgx"
	DB     *sql.DB // closed when the subtest ends
	DSN    string  // for sql.Open(Driver, DSN), in this process or a child
}

// EachDatabase runs test as two subtests, "sqlite" and "postgres", each on
// a new database of its own: a file, as SQLite returns, and a database on
// the shared server, as PostgresDB returns. The "postgres" subtest is
// skipped, or fails when SLOTLIMIT_REQUIRE_POSTGRES=1, when the server
// cannot be started.
func EachDatabase(t *testing.T, test func(t *testing.T, db Database)) {
	t.Run("sqlite", func(t *testing.T) {
		dsn := tempSQLiteDSN(t)
		test(t, Database{Name: "sqlite", Driver: "sqlite", DB: open(t, "sqlite", dsn), DSN: dsn})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := sharedPostgres(t).CreateDatabase(t)
		test(t, Database{Name: "postgres", Driver: "pgx", DB: open(t, "pgx", dsn), DSN: dsn})
	})
}
