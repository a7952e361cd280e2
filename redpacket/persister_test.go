package redpacket_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/redpacket"
)

// dialect is db's Dialect.
func dialect(db sqltest.Database) redpacket.Dialect {
	if db.Name == "postgres" {
		return redpacket.Postgres
	}
	return redpacket.SQLite
}

// newPersister returns a Persister of s into db, with the schema in place.
func newPersister(t *testing.T, s *redpacket.Store, db sqltest.Database, cfg redpacket.PersisterConfig) *redpacket.Persister {
	t.Helper()
	require.NoError(t, redpacket.CreateSchema(context.Background(), db.DB))
	cfg.DB, cfg.Dialect = db.DB, dialect(db)
	p, err := persisterOf(s, cfg)
	require.NoError(t, err)
	return p
}

// grabAll grabs every share of packet id, for users "u0", "u1", ..., and
// returns the claims by user.
func grabAll(t *testing.T, s *redpacket.Store, id string, count int) map[string]redpacket.Claim {
	t.Helper()
	claims := make(map[string]redpacket.Claim)
	for i := range count {
		user := fmt.Sprint("u", i)
		c, err := s.Grab(context.Background(), id, user)
		require.NoError(t, err)
		claims[user] = c
	}
	return claims
}

// rows returns the claim rows of packet id, by user.
func rows(t *testing.T, db sqltest.Database, id string) map[string]redpacket.Claim {
	t.Helper()
	q := "SELECT user_id, amount, seq, claimed_at_ms FROM redpacket_claims WHERE packet_id = $1"
	if dialect(db) == redpacket.SQLite {
		q = "SELECT user_id, amount, seq, claimed_at_ms FROM redpacket_claims WHERE packet_id = ?"
	}
	r, err := db.DB.Query(q, id)
	require.NoError(t, err)
	defer r.Close()
	got := make(map[string]redpacket.Claim)
	for r.Next() {
		c := redpacket.Claim{PacketID: id}
		var at int64
		require.NoError(t, r.Scan(&c.User, &c.Amount, &c.Seq, &at))
		c.At = time.UnixMilli(at)
		_, dup := got[c.User]
		require.False(t, dup, "two rows for user %s", c.User)
		got[c.User] = c
	}
	require.NoError(t, r.Err())
	return got
}

// assertPersisted asserts that the database holds exactly claims, and
// that Reconcile agrees.
func assertPersisted(t *testing.T, p *redpacket.Persister, db sqltest.Database, id string, claims map[string]redpacket.Claim) {
	t.Helper()
	got := rows(t, db, id)
	require.Len(t, got, len(claims))
	for user, c := range claims {
		assert.True(t, c.At.Equal(got[user].At), "user %s: at", user)
		c.At = got[user].At
		assert.Equal(t, c, got[user], "user %s", user)
	}
	r, err := p.Reconcile(context.Background(), id)
	require.NoError(t, err)
	assert.True(t, r.OK(), "reconcile: %+v", r)
	assert.Equal(t, len(claims), r.Claims)
	assert.Equal(t, len(claims), r.Rows)
}

// Every claim, and the packet, reach the database once; the log is empty
// after; draining again writes nothing.
func TestPersisterWritesEveryClaimOnce(t *testing.T) {
	sqltest.EachDatabase(t, func(t *testing.T, db sqltest.Database) {
		ctx := context.Background()
		b := redistest.Miniredis(t)
		s := newStore(t, b, redpacket.Config{Shards: 3})
		p := newPersister(t, s, db, redpacket.PersisterConfig{Batch: 7})
		var all []map[string]redpacket.Claim
		for i := range 4 {
			id := fmt.Sprint("packet-", i)
			require.NoError(t, s.Create(ctx, redpacket.Packet{ID: id, Total: 5000, Count: 25}))
			all = append(all, grabAll(t, s, id, 25))
		}
		pending, err := p.Pending(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(4+4*25), pending, "one entry per packet and per claim")
		n, err := p.Drain(ctx)
		require.NoError(t, err)
		assert.Equal(t, 4+4*25, n)
		pending, err = p.Pending(ctx)
		require.NoError(t, err)
		assert.Zero(t, pending)
		for i, claims := range all {
			assertPersisted(t, p, db, fmt.Sprint("packet-", i), claims)
		}
		n, err = p.Drain(ctx)
		require.NoError(t, err)
		assert.Zero(t, n)
		for shard := range 3 {
			l, err := b.Client.XLen(ctx, fmt.Sprintf("{%s:%d}:redpacket:log", s.Config().Prefix, shard)).Result()
			require.NoError(t, err)
			assert.Zero(t, l, "shard %d: the log is emptied after the commit", shard)
		}
		var total, shares int64
		q := "SELECT total, shares FROM redpacket_packets WHERE packet_id = 'packet-2'"
		require.NoError(t, db.DB.QueryRow(q).Scan(&total, &shares))
		assert.Equal(t, int64(5000), total)
		assert.Equal(t, int64(25), shares)
	})
}

// A batch whose rows were committed but whose ack never reached Redis is
// written again, and leaves each row once.
func TestBatchWrittenTwiceLeavesOneRowEach(t *testing.T) {
	sqltest.EachDatabase(t, func(t *testing.T, db sqltest.Database) {
		ctx := context.Background()
		b := redistest.Miniredis(t)
		s := newStore(t, b, redpacket.Config{})
		p := newPersister(t, s, db, redpacket.PersisterConfig{})
		require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "again", Total: 300, Count: 30}))
		first := grabAll(t, s, "again", 10)

		// Copy the log aside, let the persister write and ack it, then put
		// the copy back, as if the ack had been lost.
		log := "{" + s.Config().Prefix + ":0}:redpacket:log"
		entries, err := b.Client.XRange(ctx, log, "-", "+").Result()
		require.NoError(t, err)
		_, err = p.Drain(ctx)
		require.NoError(t, err)
		for _, e := range entries {
			require.NoError(t, b.Client.XAdd(ctx, &redis.XAddArgs{Stream: log, Values: e.Values}).Err())
		}
		second := grabAll(t, s, "again", 20) // u0..u9 again, and ten more
		for user, c := range first {
			assert.Equal(t, c, second[user], "a second grab returns the claim")
		}
		n, err := p.Drain(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1+10+10, n)
		assertPersisted(t, p, db, "again", second)
	})
}

// Entries read by a persister that died before its commit are reclaimed
// by another after ClaimIdle, and written once.
func TestDeadPersistersEntriesAreReclaimed(t *testing.T) {
	sqltest.EachDatabase(t, func(t *testing.T, db sqltest.Database) {
		ctx := context.Background()
		b := redistest.Miniredis(t)
		s := newStore(t, b, redpacket.Config{})
		live := newPersister(t, s, db, redpacket.PersisterConfig{Consumer: "live", ClaimIdle: 50 * time.Millisecond})
		_, err := live.Drain(ctx) // makes the group
		require.NoError(t, err)
		require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "dead", Total: 100, Count: 10}))
		claims := grabAll(t, s, "dead", 10)

		// The dead persister reads every entry and never comes back.
		log := "{" + s.Config().Prefix + ":0}:redpacket:log"
		read, err := b.Client.XReadGroup(ctx, &redis.XReadGroupArgs{Group: redpacket.DefaultGroup,
			Consumer: "dead", Streams: []string{log, ">"}, Count: 100, Block: -1}).Result()
		require.NoError(t, err)
		require.Len(t, read[0].Messages, 11)

		n, err := live.Drain(ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "not idle long enough to reclaim")
		b.Advance(60 * time.Millisecond) // idle time is on the server's clock
		n, err = live.Drain(ctx)
		require.NoError(t, err)
		assert.Equal(t, 11, n)
		assertPersisted(t, live, db, "dead", claims)
		pending, err := b.Client.XPending(ctx, log, redpacket.DefaultGroup).Result()
		require.NoError(t, err)
		assert.Zero(t, pending.Count)
	})
}

// A packet whose TTL passes is expired by the persister, on the server's
// clock: its unclaimed shares are written to its row and reported once.
func TestExpiredPacketsUnclaimedSharesAreWrittenAndReported(t *testing.T) {
	sqltest.EachDatabase(t, func(t *testing.T, db sqltest.Database) {
		ctx := context.Background()
		b := redistest.Miniredis(t)
		s := newStore(t, b, redpacket.Config{})
		var mu sync.Mutex
		var expired []redpacket.Expiry
		p := newPersister(t, s, db, redpacket.PersisterConfig{OnExpired: func(e redpacket.Expiry) {
			mu.Lock()
			defer mu.Unlock()
			expired = append(expired, e)
		}})
		require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "refund", Total: 1000, Count: 10, Split: redpacket.Equal, TTL: time.Minute}))
		claims := grabAll(t, s, "refund", 3)
		_, err := p.Drain(ctx)
		require.NoError(t, err)
		assert.Empty(t, expired, "not due yet")

		b.Advance(time.Minute)
		_, err = p.Drain(ctx)
		require.NoError(t, err)
		require.Len(t, expired, 1)
		at := redistest.MiniredisStart.Add(time.Minute)
		assert.True(t, at.Equal(expired[0].At), "expired at %v, on the server's clock", expired[0].At)
		expired[0].At = at
		assert.Equal(t, redpacket.Expiry{PacketID: "refund", Shares: 7, Amount: 700, At: at}, expired[0])
		var shares, amount int64
		q := "SELECT unclaimed_shares, unclaimed_amount FROM redpacket_packets WHERE packet_id = 'refund'"
		require.NoError(t, db.DB.QueryRow(q).Scan(&shares, &amount))
		assert.Equal(t, int64(7), shares)
		assert.Equal(t, int64(700), amount)
		assertPersisted(t, p, db, "refund", claims)

		_, err = p.Drain(ctx)
		require.NoError(t, err)
		assert.Len(t, expired, 1, "reported once")
	})
}

// Run writes claims as they are taken, without waiting for the packet to
// sell out, and returns soon after its context ends.
func TestRunWritesClaimsAsTheyCome(t *testing.T) {
	sqltest.EachDatabase(t, func(t *testing.T, db sqltest.Database) {
		redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := newStore(t, b, redpacket.Config{Shards: 2})
			p := newPersister(t, s, db, redpacket.PersisterConfig{})
			done := make(chan error, 1)
			go func() { done <- p.Run(ctx) }()
			id := "live-" + b.Name // one database serves every backend
			require.NoError(t, s.Create(ctx, redpacket.Packet{ID: id, Total: 1000, Count: 100}))
			claims := grabAll(t, s, id, 40)
			require.Eventually(t, func() bool { return len(rows(t, db, id)) == 40 }, 10*time.Second, 10*time.Millisecond)
			assertPersisted(t, p, db, id, claims)
			cancel()
			select {
			case err := <-done:
				assert.NoError(t, err)
			case <-time.After(3 * time.Second):
				t.Fatal("Run did not return after its context ended")
			}
		})
	})
}

// Neither a log entry no script wrote nor a due packet whose key holds
// something else stops a persister: each is reported and passed over, and
// the rest is written.
func TestPersisterPassesOverWhatItCannotWrite(t *testing.T) {
	sqltest.EachDatabase(t, func(t *testing.T, db sqltest.Database) {
		passesOver(t, db)
	})
}

func passesOver(t *testing.T, db sqltest.Database) {
	ctx := context.Background()
	b := redistest.Miniredis(t)
	s := newStore(t, b, redpacket.Config{})
	var errs []error
	p := newPersister(t, s, db, redpacket.PersisterConfig{OnError: func(err error) { errs = append(errs, err) }})
	tag := "{" + s.Config().Prefix + ":0}"
	require.NoError(t, b.Client.XAdd(ctx, &redis.XAddArgs{Stream: tag + ":redpacket:log", Values: []string{"k", "?"}}).Err())
	// A claim no grab could make, which PostgreSQL's integer column refuses.
	require.NoError(t, b.Client.XAdd(ctx, &redis.XAddArgs{Stream: tag + ":redpacket:log",
		Values: []string{"k", "c", "id", "zz", "u", "x", "a", "1", "s", "3000000000", "t", "1"}}).Err())
	// Claims taken together, one of which no grab could make.
	require.NoError(t, b.Client.XAdd(ctx, &redis.XAddArgs{Stream: tag + ":redpacket:log",
		Values: []string{"k", "b", "id", "zz", "u", "x\x00y", "c", "1:1:1\x001:0:1"}}).Err())
	require.NoError(t, b.Client.ZAdd(ctx, tag+":redpacket:due", redis.Z{Score: 0, Member: "broken"}).Err())
	require.NoError(t, b.Client.Set(ctx, tag+":redpacket:p:broken", "not a hash", 0).Err())
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "fine", Total: 10, Count: 2, TTL: time.Second}))
	claims := grabAll(t, s, "fine", 1)
	b.Advance(time.Second)

	_, err := p.Drain(ctx)
	require.NoError(t, err)
	require.Len(t, errs, 4, "%v", errs)
	assert.ErrorContains(t, errs[0], "WRONGTYPE", "the sweep comes first")
	assert.ErrorContains(t, errs[1], "not one the scripts write")
	assert.ErrorContains(t, errs[2], "not one the scripts write")
	assert.ErrorContains(t, errs[3], "not one the scripts write")
	// Each names the method that met it and the log, as a returned error does.
	log := `redpacket: drain "` + tag + `:redpacket:log": `
	hasPrefix(t, errs[0], log+`expire "broken": `)
	hasPrefix(t, errs[1], log+"log entry ")
	hasPrefix(t, errs[2], log+"log entry ")
	hasPrefix(t, errs[3], log+"log entry ")
	assertPersisted(t, p, db, "fine", claims)
	var shares int64
	require.NoError(t, db.DB.QueryRow("SELECT unclaimed_shares FROM redpacket_packets WHERE packet_id = 'fine'").Scan(&shares))
	assert.Equal(t, int64(1), shares, "the due packet after the broken one expired")
}

// A persister that stops between reporting an expiry and acking it
// reports it again when it restarts: OnExpired comes before the ack.
func TestExpiryReportedAgainAfterAStopBeforeTheAck(t *testing.T) {
	ctx := context.Background()
	b := redistest.Miniredis(t)
	s := newStore(t, b, redpacket.Config{})
	db := sqltest.Database{Name: "sqlite", DB: sqltest.SQLite(t)}
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "p", Total: 10, Count: 2, TTL: time.Second}))
	b.Advance(time.Second)

	stopped := newPersister(t, s, db, redpacket.PersisterConfig{Consumer: "a", OnExpired: func(redpacket.Expiry) {
		panic("stopped") // as a process killed right there
	}})
	assert.PanicsWithValue(t, "stopped", func() { stopped.Drain(ctx) }) //nolint:errcheck // it panics

	var reported []redpacket.Expiry
	again := newPersister(t, s, db, redpacket.PersisterConfig{Consumer: "a", OnExpired: func(e redpacket.Expiry) {
		reported = append(reported, e)
	}})
	_, err := again.Drain(ctx)
	require.NoError(t, err)
	require.Len(t, reported, 1)
	assert.Equal(t, 2, reported[0].Shares)
}

// Once a packet has been expired, no grab takes a share from it, even on
// a server whose clock runs behind the one that expired it.
func TestExpiredPacketStaysExpiredWhenTheClockGoesBack(t *testing.T) {
	ctx := context.Background()
	b := redistest.Miniredis(t)
	s := newStore(t, b, redpacket.Config{})
	db := sqltest.Database{Name: "sqlite", DB: sqltest.SQLite(t)}
	p := newPersister(t, s, db, redpacket.PersisterConfig{})
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "p", Total: 10, Count: 2, TTL: time.Second}))
	b.Advance(time.Second)
	_, err := p.Drain(ctx) // expires it: its shares go to refund
	require.NoError(t, err)

	// A clock an hour behind is the same as a deadline an hour later.
	key := "{" + s.Config().Prefix + ":0}:redpacket:p:p"
	require.NoError(t, b.Client.HSet(ctx, key, "expires", b.Now().Add(time.Hour).UnixMilli()).Err())
	_, err = s.Grab(ctx, "p", "late")
	assert.ErrorIs(t, err, redpacket.ErrExpired)
}

// A claim logged in the form a grab wrote before a claim's entry held the
// claim in one field (k=c, id, u, a, s, t), still in a log when the
// Persister meets it, is written as the claim it names, beside claims
// logged in one field.
func TestPersisterReadsClaimsLoggedInFieldsOfTheirOwn(t *testing.T) {
	sqltest.EachDatabase(t, func(t *testing.T, db sqltest.Database) {
		ctx := context.Background()
		b := redistest.Miniredis(t)
		s := newStore(t, b, redpacket.Config{})
		p := newPersister(t, s, db, redpacket.PersisterConfig{})
		require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "mixed", Total: 60, Count: 3, Split: redpacket.Random}))
		claims := grabAll(t, s, "mixed", 2)

		// Put u1's entry back in the earlier form.
		log := keyOf(s, "log", "")
		entries, err := b.Client.XRange(ctx, log, "-", "+").Result()
		require.NoError(t, err)
		var found int
		for _, e := range entries {
			if e.Values["u"] != "u1" {
				continue
			}
			found++
			assert.Equal(t, map[string]any{"id": "mixed", "u": "u1",
				"c": fmt.Sprintf("%d:%d:%d", claims["u1"].Amount, claims["u1"].Seq, claims["u1"].At.UnixMilli())}, e.Values,
				"a claim's entry: the packet, the user and the claim")
			require.NoError(t, b.Client.XDel(ctx, log, e.ID).Err())
		}
		require.Equal(t, 1, found)
		c := claims["u1"]
		require.NoError(t, b.Client.XAdd(ctx, &redis.XAddArgs{Stream: log, Values: []string{"k", "c", "id", "mixed", "u", "u1",
			"a", fmt.Sprint(c.Amount), "s", fmt.Sprint(c.Seq), "t", fmt.Sprint(c.At.UnixMilli())}}).Err())

		n, err := p.Drain(ctx)
		require.NoError(t, err)
		assert.Equal(t, 3, n, "the packet and its two claims")
		assertPersisted(t, p, db, "mixed", claims)
	})
}

// The claims of a batch of Grabs, logged together in one entry, reach the
// database as one row each, beside a claim logged alone, and the entry
// counts once in Pending and Drain.
func TestPersisterWritesClaimsLoggedTogether(t *testing.T) {
	sqltest.EachDatabase(t, func(t *testing.T, db sqltest.Database) {
		ctx := context.Background()
		b := redistest.Miniredis(t)
		client := b.NewClient(t)
		s, err := redpacket.New(client, redpacket.Config{Prefix: b.Key(t, "rp-together:")})
		require.NoError(t, err)
		p := newPersister(t, s, db, redpacket.PersisterConfig{})
		require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "together", Total: 1000, Count: 6, Split: redpacket.Random}))
		g := newGate(client, keyOf(s, "p", "together"))
		answers := crowd(t, s, g, "together", "first", []string{"a", "b", "c", "d", "e", "f", "a"})
		require.True(t, g.Batched(), "%v", g.Members())
		claims := checkCrowd(t, s, "together", 6, 1000, answers)

		pending, err := p.Pending(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(3), pending, "the packet, the lone claim, and the batch's claims in one entry")
		n, err := p.Drain(ctx)
		require.NoError(t, err)
		assert.Equal(t, 3, n)
		assertPersisted(t, p, db, "together", claims)
	})
}
