package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver

	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/redpacket"
)

// batches are the PersisterConfig.Batch values measured, in the order of
// the report.
var batches = []int{1, 100, 1000}

// Names of the databases, in the order of the report.
const (
	nameSQLite   = "SQLite"
	namePostgres = "PostgreSQL"
)

// A persistRow is the Drains of claim logs into one database with one
// Batch, summed over rounds.
type persistRow struct {
	harness.Phase // the Drains: Ops the log entries written, Server the Redis time

	db      string
	batch   int
	claims  int    // in each log, each a row to write
	drains  int    // logs drained, one a round
	skipped string // why the row was not measured; empty when it was
}

// rows returns the claim rows the Drains wrote.
func (r persistRow) rows() int64 {
	return int64(r.claims) * int64(r.drains)
}

// perSecond returns the claim rows written per second of Drain.
func (r persistRow) perSecond() float64 {
	return r.Rate(r.rows())
}

// transactions returns the batches committed per Drain: one XACK each.
func (r persistRow) transactions() float64 {
	return harness.Ratio(r.Server["xack"].Calls, int64(r.drains))
}

// redisUsec returns the server time of the Drains' top-level commands,
// those of go-redis's new connections aside, in µs.
func (r persistRow) redisUsec() int64 {
	var n int64
	for name := range r.TopLevel {
		if !slices.Contains(harness.SetupCommands, name) {
			n += r.Server.Usec(name)
		}
	}
	return n
}

// claimsFor returns the claims the persister writes with a Batch of batch.
func (b *bench) claimsFor(batch int) int {
	if batch == 1 {
		return b.claimsBatch1
	}
	return b.claims
}

// persistRounds drains a log into a new database, opened by open, for
// each batch, in b.Rounds rounds, the batches taking turns in every
// round, so that a drift in the machine's speed, or its disk's, falls on
// all of them alike; and adds a row for each batch.
func (b *bench) persistRounds(ctx context.Context, dbName string, dialect redpacket.Dialect, open func(batch, round int) (*sql.DB, error)) error {
	rows := make([]persistRow, len(batches))
	for i, batch := range batches {
		rows[i] = persistRow{db: dbName, batch: batch, claims: b.claimsFor(batch)}
	}
	for round := range b.Rounds {
		for i, batch := range batches {
			db, err := open(batch, round)
			if err != nil {
				return err
			}
			ph, err := b.drainInto(ctx, dialect, db, batch, round)
			db.Close()
			if err != nil {
				return fmt.Errorf("with Batch %d: %w", batch, err)
			}
			rows[i].Phase = rows[i].Phase.Add(ph)
			rows[i].drains++
		}
	}
	b.persist = append(b.persist, rows...)
	return nil
}

// persistSQLite measures the Persister into a new SQLite file for each
// batch and round, in a temporary directory it removes when done.
func (b *bench) persistSQLite(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "packetbench-sqlite-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	noted := false
	return b.persistRounds(ctx, nameSQLite, redpacket.SQLite, func(batch, round int) (*sql.DB, error) {
		db, err := sql.Open("sqlite", sqltest.SQLiteDSN(filepath.Join(dir, fmt.Sprintf("batch%d-round%d.db", batch, round))))
		if err != nil || noted {
			return db, err
		}
		var version, journal string
		var level int
		err = db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&version)
		if err == nil {
			err = db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&journal)
		}
		if err == nil {
			err = db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&level)
		}
		if err != nil {
			db.Close()
			return nil, err
		}
		b.dbNotes = append(b.dbNotes, fmt.Sprintf("SQLite %s through modernc.org/sqlite %s, a new file for each batch and round in a temporary directory under %s (%s), with journal_mode %s and synchronous %d (%s), by sqltest.SQLiteDSN: every transaction begins IMMEDIATE and the busy timeout is 5s.",
			version, harness.ModuleVersion("modernc.org/sqlite"), os.TempDir(), filesystem(dir), journal, level, syncName(level)))
		noted = true
		return db, nil
	})
}

// persistPostgres measures the Persister into a new database for each
// batch and round on a PostgreSQL server it starts and stops. When the
// server cannot be started, the rows are skipped with the reason, or,
// with SLOTLIMIT_REQUIRE_POSTGRES=1, the step fails.
func (b *bench) persistPostgres(ctx context.Context) error {
	pg, err := sqltest.StartPostgres()
	if err != nil {
		if os.Getenv(sqltest.RequireEnv) == "1" {
			return fmt.Errorf("PostgreSQL required (%s=1) but unavailable: %w", sqltest.RequireEnv, err)
		}
		why, _, _ := strings.Cut(err.Error(), "\n")
		for _, batch := range batches {
			b.persist = append(b.persist, persistRow{db: namePostgres, batch: batch, claims: b.claimsFor(batch), skipped: why})
		}
		b.dbNotes = append(b.dbNotes, fmt.Sprintf("PostgreSQL: skipped, as it could not be started (%s); set %s=1 to make that fail the run.", why, sqltest.RequireEnv))
		return nil
	}
	defer pg.Close()
	admin, err := sql.Open("pgx", pg.DSN)
	if err != nil {
		return err
	}
	defer admin.Close()
	var version, fsync, commit, buffers string
	for _, q := range []struct {
		setting string
		into    *string
	}{{"server_version", &version}, {"fsync", &fsync}, {"synchronous_commit", &commit}, {"shared_buffers", &buffers}} {
		if err := admin.QueryRowContext(ctx, "SHOW "+q.setting).Scan(q.into); err != nil {
			return err
		}
	}
	data := os.TempDir()
	b.dbNotes = append(b.dbNotes, fmt.Sprintf("PostgreSQL %s through github.com/jackc/pgx/v5 %s (stdlib, database/sql), started by packetbench on %s with its data in %s (%s), a new database for each batch and round; fsync %s, synchronous_commit %s, shared_buffers %s.",
		version, harness.ModuleVersion("github.com/jackc/pgx/v5"), pg.Addr, data, filesystem(data), fsync, commit, buffers))
	u, err := url.Parse(pg.DSN)
	if err != nil {
		return err
	}
	return b.persistRounds(ctx, namePostgres, redpacket.Postgres, func(batch, round int) (*sql.DB, error) {
		name := fmt.Sprintf("packetbench_batch%d_round%d", batch, round)
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			return nil, err
		}
		u.Path = "/" + name
		return sql.Open("pgx", u.String())
	})
}

// drainInto fills a new Store's claim log with the claims of one packet,
// each by a user of its own, then times a Persister's Drain of it into
// db, a database with no tables yet, and checks that db then holds a
// row for each claim, and that the Drain wrote every entry of the log.
// It returns the Drain's phase.
func (b *bench) drainInto(ctx context.Context, dialect redpacket.Dialect, db *sql.DB, batch, round int) (harness.Phase, error) {
	n := b.claimsFor(batch)
	if err := redpacket.CreateSchema(ctx, db); err != nil {
		return harness.Phase{}, err
	}
	tag := b.Key(fmt.Sprintf("persist:%s:%d:%d:", dialect, batch, round))
	defer b.deleteMatching(context.WithoutCancel(ctx), tag)
	s, err := redpacket.New(b.Client, redpacket.Config{Prefix: tag})
	if err != nil {
		return harness.Phase{}, err
	}
	const id = "p"
	if err := s.Create(ctx, redpacket.Packet{ID: id, Total: shareAmount * int64(n), Count: n, Split: redpacket.Equal}); err != nil {
		return harness.Phase{}, err
	}
	var next atomic.Int64
	bounds := harness.Bounds{Workers: b.Workers, Duration: b.timeout, MaxOps: int64(n)}
	filled, err := harness.Drive(ctx, bounds, func(ctx context.Context, _ int) error {
		_, err := s.Grab(ctx, id, user(next.Add(1)-1))
		return err
	})
	if err != nil {
		return harness.Phase{}, err
	}
	if filled != int64(n) {
		return harness.Phase{}, fmt.Errorf("the log holds %d claims of %d after -persist-timeout %v", filled, n, b.timeout)
	}

	p, err := redpacket.NewPersister(b.Client, redpacket.PersisterConfig{Store: redpacket.Config{Prefix: tag}, DB: db, Dialect: dialect, Consumer: "packetbench", Batch: batch})
	if err != nil {
		return harness.Phase{}, err
	}
	drain, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	ph, err := b.Measure(ctx, func() (int64, error) {
		written, err := p.Drain(drain)
		return int64(written), err
	})
	if err != nil {
		if drain.Err() != nil {
			return ph, fmt.Errorf("Drain not done within -persist-timeout %v: %w", b.timeout, err)
		}
		return ph, err
	}
	if want := int64(n) + 1; ph.Ops != want {
		return ph, fmt.Errorf("Drain wrote %d log entries, want %d: the packet and its claims", ph.Ops, want)
	}
	var claims, packets int
	err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM redpacket_claims").Scan(&claims)
	if err == nil {
		err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM redpacket_packets").Scan(&packets)
	}
	if err != nil {
		return ph, err
	}
	if claims != n || packets != 1 {
		return ph, fmt.Errorf("the database holds %d claim rows and %d packet rows, want %d and 1", claims, packets, n)
	}
	return ph, nil
}

// syncName names SQLite's PRAGMA synchronous level n.
func syncName(n int) string {
	if names := []string{"OFF", "NORMAL", "FULL", "EXTRA"}; n >= 0 && n < len(names) {
		return names[n]
	}
	return "unknown"
}

// filesystem returns the type of the file system that holds dir, as
// /proc/self/mounts names it ("ext4", "tmpfs"), or "file system unknown".
func filesystem(dir string) string {
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return "file system unknown"
	}
	defer f.Close()
	best, kind := "", "file system unknown"
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		mount := fields[1]
		if (dir == mount || strings.HasPrefix(dir, strings.TrimSuffix(mount, "/")+"/")) && len(mount) >= len(best) {
			best, kind = mount, fields[2]
		}
	}
	return kind
}
