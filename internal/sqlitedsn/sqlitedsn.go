// Package sqlitedsn builds the DSN with which the tests, the examples and
// the benchmarks open a SQLite file, so that every connection to the file
// waits for the others' writes instead of failing with SQLITE_BUSY.
package sqlitedsn

import (
	"net/url"
	"path/filepath"
	"strings"
)

// pragmas is the query DSN adds to a file's URI:
//   - busy_timeout(5000): a connection that finds the database locked
//     waits up to 5s for it, instead of failing with SQLITE_BUSY;
//   - journal_mode(WAL): statements outside a transaction read while
//     another connection writes;
//   - _txlock=immediate: every transaction takes the write lock at BEGIN,
//     so that one which reads and then writes cannot fail with
//     SQLITE_BUSY because another wrote in between, a case busy_timeout
//     does not cover. Transactions on the file run one at a time.
const pragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate"

// DSN returns the DSN, for the "sqlite" driver (modernc.org/sqlite), of
// the SQLite database in the file at path, created if missing: a file:
// URI, with path made absolute (left as it is if the working directory
// cannot be found). Every *sql.DB opened with it, in this process or
// another, waits up to 5s for the others' writes instead of failing with
// SQLITE_BUSY, runs in WAL mode, and begins every transaction with BEGIN
// IMMEDIATE, so that transactions on the file run one at a time.
func DSN(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	path = filepath.ToSlash(path)
	if !strings.HasPrefix(path, "/") {
		path = "/" + path // file:///C:/dir/file on Windows
	}
	u := url.URL{Scheme: "file", Path: path, RawQuery: pragmas}
	return u.String()
}
