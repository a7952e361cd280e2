package sqltest_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/sqltest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	sqltest.Shutdown()
	os.Exit(code)
}

// sqliteFile returns the file db keeps its main database in.
func sqliteFile(t *testing.T, db *sql.DB) string {
	t.Helper()
	var seq int
	var name, file string
	require.NoError(t, db.QueryRow("PRAGMA database_list").Scan(&seq, &name, &file))
	require.NotEmpty(t, file, "the database is not in a file")
	return file
}

func TestSQLiteTakesATable(t *testing.T) {
	db := sqltest.SQLite(t)
	_, err := db.Exec("CREATE TABLE claims (id INTEGER PRIMARY KEY, who TEXT NOT NULL)")
	require.NoError(t, err)
	_, err = db.Exec("INSERT INTO claims (who) VALUES (?), (?)", "ann", "bob")
	require.NoError(t, err)

	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM claims").Scan(&n))
	assert.Equal(t, 2, n)
	var mode string
	require.NoError(t, db.QueryRow("PRAGMA journal_mode").Scan(&mode))
	assert.Equal(t, "wal", mode)
	var timeout int
	require.NoError(t, db.QueryRow("PRAGMA busy_timeout").Scan(&timeout))
	assert.Equal(t, 5000, timeout)
}

// SQLiteDSN names the file even when its path holds characters a URI
// gives a meaning to.
func TestSQLiteDSNOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a b#c%d?e&f")
	require.NoError(t, os.Mkdir(dir, 0o755))
	path := filepath.Join(dir, "odd.db")
	db, err := sql.Open("sqlite", sqltest.SQLiteDSN(path))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec("CREATE TABLE t (x int)")
	require.NoError(t, err)
	assert.FileExists(t, path)
}

// Two *sql.DB on one file, as two processes would have, write at once;
// each transaction reads the highest number and inserts the next. None
// fails with SQLITE_BUSY, and none reads a number another has since
// taken: transactions on the file run one at a time. The writers wait for
// one another up to a minute, a bound for gross failures, instead of the
// DSN's 5 s (TestSQLiteTakesATable checks that one), which one writer of
// eight can spend waiting on a busy machine.
func TestSQLiteConcurrentWritersWait(t *testing.T) {
	const writers, each = 4, 25
	created := sqltest.SQLite(t)
	_, err := created.Exec("CREATE TABLE seq (n INTEGER PRIMARY KEY, writer TEXT NOT NULL)")
	require.NoError(t, err)
	dsn := sqltest.SQLiteDSN(sqliteFile(t, created))
	require.Contains(t, dsn, "busy_timeout(5000)")
	patient := strings.Replace(dsn, "busy_timeout(5000)", "busy_timeout(60000)", 1)
	first, err := sql.Open("sqlite", patient)
	require.NoError(t, err)
	t.Cleanup(func() { first.Close() })
	second, err := sql.Open("sqlite", patient)
	require.NoError(t, err)
	t.Cleanup(func() { second.Close() })
	var timeout int
	require.NoError(t, first.QueryRow("PRAGMA busy_timeout").Scan(&timeout))
	require.Equal(t, 60000, timeout)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	next := func(db *sql.DB, writer string) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(n), 0) FROM seq").Scan(&n); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO seq (n, writer) VALUES (?, ?)", n+1, writer); err != nil {
			return err
		}
		return tx.Commit()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers*each)
	for i, db := range []*sql.DB{first, second} {
		for w := range writers {
			wg.Go(func() {
				for range each {
					if err := next(db, fmt.Sprintf("%d/%d", i, w)); err != nil {
						errs <- err
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("write: %v", err)
	}

	var count, highest, writersSeen int
	require.NoError(t, first.QueryRow("SELECT count(*), max(n), count(DISTINCT writer) FROM seq").Scan(&count, &highest, &writersSeen))
	assert.Equal(t, 2*writers*each, count)
	assert.Equal(t, 2*writers*each, highest)
	assert.Equal(t, 2*writers, writersSeen)
}

func TestPostgresCommittedRowSurvivesKill(t *testing.T) {
	p := sqltest.StartPostgresT(t)
	db := p.Open(t)
	_, err := db.Exec("CREATE TABLE claims (id serial PRIMARY KEY, who text NOT NULL)")
	require.NoError(t, err)
	_, err = db.Exec("INSERT INTO claims (who) VALUES ($1)", "ann")
	require.NoError(t, err)

	p.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.Error(t, db.PingContext(ctx), "the server answers after Kill")

	require.NoError(t, p.Restart())
	var who string
	require.Eventually(t, func() bool {
		// A call may fail once on a connection that died with the server.
		return db.QueryRow("SELECT who FROM claims").Scan(&who) == nil
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, "ann", who)

	// The restarted server takes writes.
	_, err = db.Exec("INSERT INTO claims (who) VALUES ($1)", "bob")
	require.NoError(t, err)
	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM claims").Scan(&n))
	assert.Equal(t, 2, n)
}

// Kill ends the backends too, even one busy with a query, which alone
// would notice the postmaster's death only when done, and keep the
// shared memory a new postmaster refuses to start beside.
func TestPostgresRestartBesideBusyBackend(t *testing.T) {
	p := sqltest.StartPostgresT(t)
	db := p.Open(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		db.ExecContext(ctx, "SELECT count(*) FROM generate_series(1, 1e12::bigint)")
	}()
	require.Eventually(t, func() bool {
		var busy int
		err := db.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%generate_series%' AND pid <> pg_backend_pid()").Scan(&busy)
		return err == nil && busy == 1
	}, 10*time.Second, 10*time.Millisecond, "the query runs")

	p.Kill()
	require.NoError(t, p.Restart())
	<-done
	var one int
	require.NoError(t, db.QueryRow("SELECT 1").Scan(&one))
}

func TestPostgresOpenIsolates(t *testing.T) {
	a, b := sqltest.PostgresDB(t), sqltest.PostgresDB(t)
	var nameA, nameB string
	require.NoError(t, a.QueryRow("SELECT current_database()").Scan(&nameA))
	require.NoError(t, b.QueryRow("SELECT current_database()").Scan(&nameB))
	assert.NotEqual(t, nameA, nameB)

	for _, db := range []*sql.DB{a, b} {
		_, err := db.Exec("CREATE TABLE claims (who text NOT NULL)")
		require.NoError(t, err, "the same table in each database")
	}
	_, err := a.Exec("INSERT INTO claims (who) VALUES ('ann')")
	require.NoError(t, err)
	var n int
	require.NoError(t, b.QueryRow("SELECT count(*) FROM claims").Scan(&n))
	assert.Zero(t, n, "a row written to one database is seen in another")
}

// Tests on the shared server run in parallel, each on a database of its
// own.
func TestPostgresDBParallel(t *testing.T) {
	for i := range 4 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			db := sqltest.PostgresDB(t)
			_, err := db.Exec("CREATE TABLE claims (who text NOT NULL)")
			require.NoError(t, err)
			_, err = db.Exec("INSERT INTO claims (who) VALUES ($1)", fmt.Sprint(i))
			require.NoError(t, err)
			var who []string
			rows, err := db.Query("SELECT who FROM claims")
			require.NoError(t, err)
			for rows.Next() {
				var w string
				require.NoError(t, rows.Scan(&w))
				who = append(who, w)
			}
			require.NoError(t, rows.Err())
			assert.Equal(t, []string{fmt.Sprint(i)}, who)
		})
	}
}

func TestEachDatabase(t *testing.T) {
	var ran []string
	sqltest.EachDatabase(t, func(t *testing.T, db sqltest.Database) {
		ran = append(ran, db.Name)
		assert.Equal(t, db.Name, t.Name()[len("TestEachDatabase/"):])
		_, err := db.DB.Exec("CREATE TABLE claims (id integer PRIMARY KEY, who text NOT NULL)")
		require.NoError(t, err)
		// $1 placeholders work on both.
		_, err = db.DB.Exec("INSERT INTO claims (id, who) VALUES ($1, $2)", 1, "ann")
		require.NoError(t, err)

		// The DSN opens the same database.
		again, err := sql.Open(db.Driver, db.DSN)
		require.NoError(t, err)
		defer again.Close()
		var who string
		require.NoError(t, again.QueryRow("SELECT who FROM claims WHERE id = $1", 1).Scan(&who))
		assert.Equal(t, "ann", who)
	})
	if len(ran) == 1 && os.Getenv(sqltest.RequireEnv) != "1" {
		t.Log("PostgreSQL unavailable; ran on SQLite only")
		ran = append(ran, "postgres")
	}
	assert.Equal(t, []string{"sqlite", "postgres"}, ran)
}
