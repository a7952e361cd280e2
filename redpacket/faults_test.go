package redpacket_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/redpacket"
)

// What a persister child learns from its parent.
const (
	childDriverEnv   = "SLOTLIMIT_TEST_RP_DRIVER"
	childDSNEnv      = "SLOTLIMIT_TEST_RP_DSN"
	childConsumerEnv = "SLOTLIMIT_TEST_RP_CONSUMER"
)

// grabInBackground grabs every share of packet id, for users "u0" to
// "u<count-1>", 8 at a time, each goroutine pausing for pace after each
// grab, and returns a function that waits for the grabs to end and
// returns the claims by user.
func grabInBackground(t *testing.T, s *redpacket.Store, id string, count int, pace time.Duration) (wait func() map[string]redpacket.Claim) {
	var mu sync.Mutex
	claims := make(map[string]redpacket.Claim)
	users := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range users {
				c, err := s.Grab(context.Background(), id, "u"+strconv.Itoa(u))
				if !assert.NoError(t, err) {
					continue
				}
				mu.Lock()
				claims[c.User] = c
				mu.Unlock()
				time.Sleep(pace)
			}
		}()
	}
	go func() {
		for u := range count {
			users <- u
		}
		close(users)
	}()
	return func() map[string]redpacket.Claim {
		wg.Wait()
		return claims
	}
}

// countRows counts the claim rows of packet id.
func countRows(t *testing.T, db *sql.DB, id string, d redpacket.Dialect) int {
	q := "SELECT COUNT(*) FROM redpacket_claims WHERE packet_id = ?"
	if d == redpacket.Postgres {
		q = "SELECT COUNT(*) FROM redpacket_claims WHERE packet_id = $1"
	}
	var n int
	require.NoError(t, db.QueryRow(q, id).Scan(&n))
	return n
}

// A persister process killed with SIGKILL while it writes, again and
// again, under one consumer name and under another, loses no claim and
// doubles none: the restarted one finishes its own unacked entries, and
// the other reclaims the dead one's after ClaimIdle.
func TestPersisterKilledMidBatch(t *testing.T) {
	if redistest.ChildRole() == "persister" {
		persisterChild(t)
		return
	}
	sqltest.EachDatabase(t, func(t *testing.T, db sqltest.Database) {
		b := redistest.Redis(t)
		s := newStore(t, b, redpacket.Config{})
		p := newPersister(t, s, db, redpacket.PersisterConfig{}) // for Reconcile
		const id, count = "killed", 1500
		require.NoError(t, s.Create(t.Context(), redpacket.Packet{ID: id, Total: 100_000, Count: count}))
		// Grabs outpace the persisters, so that each is killed with a
		// full batch in hand.
		wait := grabInBackground(t, s, id, count, 0)

		start := func(consumer string) *redistest.Child {
			c := redistest.StartChild(t, b.Target(), "TestPersisterKilledMidBatch", "persister",
				childPrefixEnv+"="+s.Config().Prefix, childDriverEnv+"="+db.Driver, childDSNEnv+"="+db.DSN,
				childConsumerEnv+"="+consumer)
			c.Await(t, "running", 20*time.Second)
			return c
		}
		log := "{" + s.Config().Prefix + ":0}:redpacket:log"
		unacked := int64(0) // entries read but not acked, over the kills
		// killAt kills c once the rows reach rows, at a moment when it
		// holds entries it has read and not acked, so that the kill
		// strikes mid-batch however fast or slow the machine runs it.
		killAt := func(c *redistest.Child, rows int) {
			require.Eventually(t, func() bool {
				if countRows(t, db.DB, id, dialect(db)) < rows {
					return false
				}
				pending, err := b.Client.XPending(t.Context(), log, redpacket.DefaultGroup).Result()
				return err == nil && pending.Count > 0
			}, 20*time.Second, time.Millisecond, "rows reach %d with entries in hand", rows)
			require.NoError(t, c.Cmd.Process.Kill())
			c.Wait(t, 10*time.Second)
			pending, err := b.Client.XPending(t.Context(), log, redpacket.DefaultGroup).Result()
			require.NoError(t, err)
			t.Logf("killed at %d rows of %d, %d entries unacked", countRows(t, db.DB, id, dialect(db)), count, pending.Count)
			unacked += pending.Count
		}
		killAt(start("a"), 300)
		killAt(start("b"), 700) // takes over a's entries after ClaimIdle
		killAt(start("b"), 1000)
		start("b") // writes the rest
		assert.Positive(t, unacked, "some kill struck mid-batch")
		claims := wait()
		require.Len(t, claims, count)
		require.Eventually(t, func() bool { return countRows(t, db.DB, id, dialect(db)) == count },
			30*time.Second, 10*time.Millisecond)
		assertPersisted(t, p, db, id, claims)
		// The rows are committed before their entries are acked.
		assert.Eventually(t, func() bool {
			pending, err := b.Client.XPending(t.Context(), log, redpacket.DefaultGroup).Result()
			return err == nil && pending.Count == 0
		}, 10*time.Second, 10*time.Millisecond, "no entry left unacked")
	})
}

// persisterChild runs a persister, in batches of 20, that reclaims entries
// idle for 300ms, and prints "running".
func persisterChild(t *testing.T) {
	ctx, client := redistest.ChildSetup(t, 4)
	s, err := redpacket.New(client, redpacket.Config{Prefix: os.Getenv(childPrefixEnv)})
	require.NoError(t, err)
	db, err := sql.Open(os.Getenv(childDriverEnv), os.Getenv(childDSNEnv))
	require.NoError(t, err)
	defer db.Close()
	d := redpacket.SQLite
	if os.Getenv(childDriverEnv) == "pgx" {
		d = redpacket.Postgres
	}
	p, err := persisterOf(s, redpacket.PersisterConfig{DB: db, Dialect: d, Batch: 20,
		Consumer: os.Getenv(childConsumerEnv), ClaimIdle: 300 * time.Millisecond,
		OnError: func(err error) { fmt.Fprintln(os.Stderr, "persister:", err) }})
	require.NoError(t, err)
	fmt.Println("running")
	require.NoError(t, p.Run(ctx))
}

// PostgreSQL killed and restarted while a persister writes: the persister
// retries, and every claim reaches the database once.
func TestDatabaseRestartMidBatch(t *testing.T) {
	pg := sqltest.StartPostgresT(t)
	dsn := pg.CreateDatabase(t)
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := redistest.Redis(t)
	s := newStore(t, b, redpacket.Config{})
	var failures atomic.Int64
	p := newPersister(t, s, sqltest.Database{Name: "postgres", DB: db}, redpacket.PersisterConfig{
		Batch: 20, OnError: func(error) { failures.Add(1) }})
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()

	const id, count = "db-restart", 1500
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: id, Total: 100_000, Count: count}))
	wait := grabInBackground(t, s, id, count, time.Millisecond)
	require.Eventually(t, func() bool { return countRows(t, db, id, redpacket.Postgres) >= 200 },
		20*time.Second, time.Millisecond)
	pg.Kill()
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, pg.Restart())
	claims := wait()
	require.Len(t, claims, count)
	require.Eventually(t, func() bool { return countRows(t, db, id, redpacket.Postgres) == count },
		30*time.Second, 10*time.Millisecond)
	assert.Positive(t, failures.Load(), "writes failed while the database was down")
	assertPersisted(t, p, sqltest.Database{Name: "postgres", DB: db}, id, claims)
	cancel()
	require.NoError(t, <-done)
}
