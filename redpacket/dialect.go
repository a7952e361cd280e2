package redpacket

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// A Dialect is the SQL database a Persister writes to. The schema and
// statements are the same for both, but for their placeholders.
type Dialect int

const (
	// SQLite is SQLite 3.24 or later, such as modernc.org/sqlite.
	SQLite Dialect = iota + 1
	// Postgres is PostgreSQL 9.5 or later, such as through
	// github.com/jackc/pgx/v5/stdlib.
	Postgres
)

// String returns "sqlite" or "postgres", or "Dialect(n)" for another
// value.
func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	}
	return "Dialect(" + strconv.Itoa(int(d)) + ")"
}

// Schema is the tables a Persister writes, as CREATE TABLE IF NOT EXISTS
// statements that SQLite and PostgreSQL both take. Times are milliseconds
// since 1970 on the Redis server's clock; amounts are in the smallest
// currency unit. A packet's unclaimed columns are NULL until it expires;
// then they hold the shares no one took, for refund.
//
// The primary key of redpacket_claims, (packet_id, user_id), is what
// makes every insert idempotent: a claim written twice is one row.
const Schema = `CREATE TABLE IF NOT EXISTS redpacket_packets (
	packet_id        TEXT     PRIMARY KEY,
	total            BIGINT   NOT NULL,
	shares           INTEGER  NOT NULL,
	split            SMALLINT NOT NULL,
	created_at_ms    BIGINT   NOT NULL,
	expires_at_ms    BIGINT   NOT NULL,
	expired_at_ms    BIGINT,
	unclaimed_shares INTEGER,
	unclaimed_amount BIGINT
);
CREATE TABLE IF NOT EXISTS redpacket_claims (
	packet_id     TEXT    NOT NULL,
	user_id       TEXT    NOT NULL,
	amount        BIGINT  NOT NULL,
	seq           INTEGER NOT NULL,
	claimed_at_ms BIGINT  NOT NULL,
	PRIMARY KEY (packet_id, user_id)
);`

// CreateSchema runs Schema on db, one statement at a time. It is safe to
// run again. A nil db or ctx is an error matching ErrInvalidArgument.
func CreateSchema(ctx context.Context, db *sql.DB) error {
	if db == nil {
		return keyless("CreateSchema", errs.Argument("db is nil"))
	}
	if ctx == nil {
		return keyless("CreateSchema", errNilContext)
	}
	for _, stmt := range strings.SplitAfter(Schema, ";") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return keyless("CreateSchema", err)
		}
	}
	return nil
}

// values returns the VALUES list of a multi-row insert of rows rows of
// cols columns, in d's placeholders: "(?,?),(?,?)" or "($1,$2),($3,$4)".
func (d Dialect) values(rows, cols int) string {
	var b strings.Builder
	n := 0
	for r := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for c := range cols {
			if c > 0 {
				b.WriteByte(',')
			}
			n++
			if d == Postgres {
				b.WriteString("$" + strconv.Itoa(n))
			} else {
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// placeholder returns d's placeholder for argument n, counting from 1.
func (d Dialect) placeholder(n int) string {
	if d == Postgres {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// The statements a Persister runs. A packet row written again keeps the
// expiry it has, or takes the one it is given; a claim written again is
// left as it is.
const (
	insertPackets = `INSERT INTO redpacket_packets (packet_id, total, shares, split,
	created_at_ms, expires_at_ms, expired_at_ms, unclaimed_shares, unclaimed_amount) VALUES `
	upsertPackets = ` ON CONFLICT (packet_id) DO UPDATE SET
	expired_at_ms = COALESCE(redpacket_packets.expired_at_ms, excluded.expired_at_ms),
	unclaimed_shares = COALESCE(redpacket_packets.unclaimed_shares, excluded.unclaimed_shares),
	unclaimed_amount = COALESCE(redpacket_packets.unclaimed_amount, excluded.unclaimed_amount)`
	packetCols = 9

	insertClaims = `INSERT INTO redpacket_claims (packet_id, user_id, amount, seq, claimed_at_ms) VALUES `
	skipClaims   = ` ON CONFLICT (packet_id, user_id) DO NOTHING`
	claimCols    = 5

	selectClaims = `SELECT user_id, amount, seq, claimed_at_ms FROM redpacket_claims WHERE packet_id = `
)

// rowsPerInsert is the most rows one INSERT carries, well below the
// databases' limits on bound parameters (SQLite's 32766, PostgreSQL's
// 65535): SQLite wrote 100-row statements faster than longer ones,
// PostgreSQL 1,000-row ones, when last measured.
func (d Dialect) rowsPerInsert() int {
	if d == Postgres {
		return 1000
	}
	return 100
}
