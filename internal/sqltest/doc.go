// Package sqltest opens throwaway databases for tests: an embedded SQLite
// file and a PostgreSQL server it starts itself.
//
// SQLite needs nothing installed: SQLite returns a database in a file of
// the test's own. PostgreSQL needs initdb and postgres, found on PATH or
// in /usr/lib/postgresql/<version>/bin, where Debian and Ubuntu put them.
// PostgresDB returns a database of the test's own on a server started once
// per test binary; StartPostgresT starts a server of the test's own, which
// the test may kill and restart. EachDatabase runs a test on both.
//
// Like redistest, the package never connects to a server it did not
// start. Its servers listen on free loopback ports only, keep their data
// in a fresh temporary directory, and die with the test binary. When
// PostgreSQL cannot be had, a test that asks for it is skipped, or fails
// when SLOTLIMIT_REQUIRE_POSTGRES=1.
package sqltest
