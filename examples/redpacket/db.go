package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver

	"github.com/slotlimit/slotlimit/internal/sqlitedsn"
	"github.com/slotlimit/slotlimit/redpacket"
)

// A database is where the persister writes the claims.
type database struct {
	db      *sql.DB
	dialect redpacket.Dialect
	name    string // for the report
	close   func() // closes db and removes a temporary file; never nil
}

// openDB opens PostgreSQL at dsn, when given, or else the SQLite file at
// path, or else a SQLite file in a new temporary directory, removed by
// close. SQLite connections wait for one another's writes rather than
// fail, so the progress query reads while the persister writes (see
// sqlitedsn.DSN).
func openDB(ctx context.Context, path, dsn string) (*database, error) {
	if path != "" && dsn != "" {
		return nil, errors.New("-db and -postgres: give one or the other")
	}
	if dsn != "" {
		return connect(ctx, "pgx", dsn, &database{dialect: redpacket.Postgres, name: "PostgreSQL"}, func() {})
	}
	removeDir := func() {}
	if path == "" {
		dir, err := os.MkdirTemp("", "redpacket-example-")
		if err != nil {
			return nil, err
		}
		path = filepath.Join(dir, "redpacket.db")
		removeDir = func() { os.RemoveAll(dir) }
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		removeDir()
		return nil, err
	}
	return connect(ctx, "sqlite", sqlitedsn.DSN(abs), &database{dialect: redpacket.SQLite, name: "SQLite " + abs}, removeDir)
}

// connect opens d.db with driver and dsn and checks that it answers. Its
// close runs after, once d.db is closed.
func connect(ctx context.Context, driver, dsn string, d *database, after func()) (*database, error) {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		after()
		return nil, err
	}
	d.db = db
	d.close = func() { db.Close(); after() }
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		d.close()
		return nil, fmt.Errorf("connect to %s: %w", d.name, err)
	}
	return d, nil
}

// arg is the dialect's placeholder for a query's only argument.
func (d *database) arg() string {
	if d.dialect == redpacket.Postgres {
		return "$1"
	}
	return "?"
}

// claimRows returns the number of claim rows of a packet, their sum, and
// the number of distinct users among them.
func (d *database) claimRows(ctx context.Context, packetID string) (rows, users int, sum int64, err error) {
	err = d.db.QueryRowContext(ctx,
		"SELECT COUNT(*), COUNT(DISTINCT user_id), COALESCE(SUM(amount), 0) FROM redpacket_claims WHERE packet_id = "+d.arg(),
		packetID).Scan(&rows, &users, &sum)
	return rows, users, sum, err
}

// unclaimed returns the unclaimed shares and amount in a packet's row;
// ok is false while the row has none (the packet has not expired).
func (d *database) unclaimed(ctx context.Context, packetID string) (shares int, amount int64, ok bool, err error) {
	var s, a sql.NullInt64
	err = d.db.QueryRowContext(ctx,
		"SELECT unclaimed_shares, unclaimed_amount FROM redpacket_packets WHERE packet_id = "+d.arg(),
		packetID).Scan(&s, &a)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, false, nil
	}
	return int(s.Int64), a.Int64, s.Valid && a.Valid, err
}
