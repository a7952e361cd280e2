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

// Every write is sent through a client that loses its reply after the
// server ran it, with go-redis's default retries: go-redis sends it again,
// so it runs twice while the caller sees one call. The effect must be
// that of one call, and the answer the first run's.

// cutStores returns a Store on a client of b whose replies the returned
// cutter loses, and a Store with the same Config on b's own client, for
// looking; keys no other test uses.
func cutStores(t *testing.T, b *redistest.Backend, cfg redpacket.Config) (cut *redpacket.Store, cutter *redistest.ReplyCutter, plain *redpacket.Store) {
	t.Helper()
	cfg.Prefix = b.Key(t, "rp-cut:")
	client, cutter := b.CutClient(t)
	cut, err := redpacket.New(client, cfg)
	require.NoError(t, err)
	plain, err = redpacket.New(b.Client, cfg)
	require.NoError(t, err)
	return cut, cutter, plain
}

// keyOf returns the key of packet id in shard 0 of s ("p" the packet,
// "s" its shares), or the shard's own key ("log", "due", "sync") when id
// is empty.
func keyOf(s *redpacket.Store, kind, id string) string {
	tag := "{" + s.Config().Prefix + ":0}"
	if id == "" {
		return tag + ":redpacket:" + kind
	}
	return tag + ":redpacket:" + kind + ":" + id
}

// logged counts the entries of kind k ("p", "c" or "x") for packet id in
// shard 0's log, and for user when it is not empty.
func logged(t *testing.T, client redis.UniversalClient, s *redpacket.Store, k, id, user string) int {
	t.Helper()
	msgs, err := client.XRange(context.Background(), keyOf(s, "log", ""), "-", "+").Result()
	require.NoError(t, err)
	n := 0
	for _, m := range msgs {
		kind := m.Values["k"]
		if _, ok := m.Values["c"]; ok && kind == nil {
			kind = "c" // a claim's entry: id, u and the claim, c
		}
		if kind == k && m.Values["id"] == id && (user == "" || m.Values["u"] == user) {
			n++
		}
	}
	return n
}

// A Create whose reply is lost is sent again by go-redis, and finds the
// packet its first run stored: it returns nil, not ErrExists, and the
// packet is stored once, with the shares the first run cut, and logged
// once. Another packet under the same id still gets ErrExists.
func TestCreateSentTwiceCreatesOnce(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		s, cutter, plain := cutStores(t, b, redpacket.Config{})
		require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "warm", Total: 1, Count: 1})) // the script is cached
		for _, split := range []redpacket.Split{redpacket.Random, redpacket.Equal} {
			p := redpacket.Packet{ID: "twice-" + split.String(), Total: 1000, Count: 7, Split: split}
			cuts := cutter.Cuts()
			cutter.Arm(1, "evalsha", keyOf(s, "p", p.ID))
			require.NoError(t, s.Create(ctx, p), "%v: the re-sent Create finds its own packet", split)
			require.Equal(t, cuts+1, cutter.Cuts(), "the reply was lost once")

			n, err := b.Client.LLen(ctx, keyOf(s, "s", p.ID)).Result()
			require.NoError(t, err)
			assert.Equal(t, int64(p.Count), n, "%v: the shares are stored once", split)
			assert.Equal(t, 1, logged(t, b.Client, s, "p", p.ID, ""), "%v: the packet is logged once", split)

			other := p
			other.Count = 6
			assert.ErrorIs(t, s.Create(ctx, other), redpacket.ErrExists, "%v: another packet under the id", split)
			other = p
			other.TTL = time.Hour
			assert.ErrorIs(t, s.Create(ctx, other), redpacket.ErrExists, "%v: another TTL", split)
			cut, err := b.Client.LRange(ctx, keyOf(s, "s", p.ID), 0, -1).Result()
			require.NoError(t, err)
			assert.NoError(t, s.Create(ctx, p), "%v: the same Packet again, as after an unknown outcome", split)
			again, err := b.Client.LRange(ctx, keyOf(s, "s", p.ID), 0, -1).Result()
			require.NoError(t, err)
			assert.Equal(t, cut, again, "%v: the shares stay as the first run cut them", split)

			var sum int64
			for i := range p.Count {
				c, err := plain.Grab(ctx, p.ID, fmt.Sprint("u", i))
				require.NoError(t, err)
				sum += c.Amount
			}
			assert.Equal(t, p.Total, sum, "%v: the shares of one cut", split)
			_, err = plain.Grab(ctx, p.ID, "late")
			assert.ErrorIs(t, err, redpacket.ErrSoldOut)
		}
	})
}

// A Create whose reply is lost on every try fails, its outcome unknown;
// Create again with the same Packet then returns nil if it was created.
func TestCreateAgainAfterAnUnknownOutcome(t *testing.T) {
	b := redistest.Redis(t)
	ctx := context.Background()
	s, cutter, plain := cutStores(t, b, redpacket.Config{})
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "warm", Total: 1, Count: 1}))
	p := redpacket.Packet{ID: "unknown", Total: 500, Count: 5}
	cutter.Arm(10, "evalsha", keyOf(s, "p", p.ID))
	err := s.Create(ctx, p)
	require.Error(t, err)
	assert.NotErrorIs(t, err, redpacket.ErrExists)
	assert.ErrorContains(t, err, `redpacket: create "unknown"`)
	cutter.Arm(0)
	require.NoError(t, s.Create(ctx, p), "it was created")
	shares, amount, err := plain.Remaining(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, 5, shares)
	assert.Equal(t, int64(500), amount)
	assert.Equal(t, 1, logged(t, b.Client, s, "p", p.ID, ""))
}

// A Grab whose reply is lost is sent again by go-redis, and returns the
// claim its first run took: one share is taken and logged once. A grab
// refused (sold out) is refused again, with nothing written.
func TestGrabSentTwiceTakesOneShare(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		s, cutter, plain := cutStores(t, b, redpacket.Config{})
		p := redpacket.Packet{ID: "grab", Total: 30, Count: 3}
		require.NoError(t, plain.Create(ctx, p))
		_, err := plain.Grab(ctx, p.ID, "warm") // the script is cached
		require.NoError(t, err)

		cutter.Arm(1, "evalsha", keyOf(s, "p", p.ID))
		c, err := s.Grab(ctx, p.ID, "alice")
		require.NoError(t, err)
		require.Equal(t, 1, cutter.Cuts())
		assert.Equal(t, 2, c.Seq, "the first run's share")
		again, err := plain.Grab(ctx, p.ID, "alice")
		require.NoError(t, err)
		assert.Equal(t, c, again)
		shares, _, err := plain.Remaining(ctx, p.ID)
		require.NoError(t, err)
		assert.Equal(t, 1, shares, "one share taken by alice's grab")
		assert.Equal(t, 1, logged(t, b.Client, s, "c", p.ID, "alice"), "alice's claim is logged once")

		bob, err := plain.Grab(ctx, p.ID, "bob")
		require.NoError(t, err)
		assert.Equal(t, 3, bob.Seq, "no share was burned")
		cutter.Arm(1, "evalsha", keyOf(s, "p", p.ID))
		_, err = s.Grab(ctx, p.ID, "carol")
		assert.ErrorIs(t, err, redpacket.ErrSoldOut)
		assert.Equal(t, 2, cutter.Cuts())
		assert.Zero(t, logged(t, b.Client, s, "c", p.ID, "carol"))
	})
}

// With Config.Replicas, Create and Grab run in a pipeline with WAIT; a
// pipeline whose reply is lost is sent again, and still takes effect once.
func TestReplicatedWritesSentTwiceTakeEffectOnce(t *testing.T) {
	r := redistest.StartReplicated(t)
	b := &redistest.Backend{Name: "replicated", Client: r.Client, Opts: redis.UniversalOptions{Addrs: []string{r.Master.Addr}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, cutter, _ := cutStores(t, b, redpacket.Config{Replicas: 1, ReplicaTimeout: 10 * time.Second})
	db := sqltest.Database{Name: "sqlite", DB: sqltest.SQLite(t)}
	per := newPersister(t, s, db, redpacket.PersisterConfig{})
	// Every script is cached.
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "warm", Total: 1, Count: 1}))
	_, err := s.Grab(ctx, "warm", "warm")
	require.NoError(t, err)
	_, err = per.Drain(ctx)
	require.NoError(t, err)

	p := redpacket.Packet{ID: "replicated", Total: 100, Count: 4}
	cutter.Arm(1, "evalsha", keyOf(s, "p", p.ID))
	require.NoError(t, s.Create(ctx, p))
	cutter.Arm(1, "evalsha", keyOf(s, "p", p.ID))
	c, err := s.Grab(ctx, p.ID, "alice")
	require.NoError(t, err)
	assert.Equal(t, 2, cutter.Cuts())
	assert.Equal(t, 1, c.Seq)
	assert.Equal(t, 1, logged(t, r.ReplicaClient, s, "p", p.ID, ""), "the replica has the packet once")
	assert.Equal(t, 1, logged(t, r.ReplicaClient, s, "c", p.ID, "alice"), "and the claim once")

	cutter.Arm(1, "evalsha", keyOf(s, "sync", ""))
	_, err = per.Drain(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, cutter.Cuts(), "the sync marker's reply was lost")
	assertPersisted(t, per, db, p.ID, map[string]redpacket.Claim{"alice": c})
	pending, err := per.Pending(ctx)
	require.NoError(t, err)
	assert.Zero(t, pending)
}

// Each Redis command a persister sends, its reply lost once and the
// command sent again, leaves the database with every claim once, the log
// empty, nothing pending, and each expiry reported once, after one Drain.
func TestPersisterCommandsSentTwice(t *testing.T) {
	sqltest.EachDatabase(t, func(t *testing.T, db sqltest.Database) {
		b := redistest.Redis(t)
		for _, step := range []struct {
			name  string
			words []string // what the lost command holds; "packet" and "log" stand for the keys
			dead  bool     // another consumer read the entries and died: they are reclaimed
		}{
			{name: "group", words: []string{"xgroup", "create"}},
			{name: "read new", words: []string{"xreadgroup", ">"}},
			{name: "reclaim", words: []string{"xautoclaim"}, dead: true},
			{name: "expire", words: []string{"evalsha", "packet"}},
			{name: "ack", words: []string{"evalsha", "log", redpacket.DefaultGroup}},
		} {
			t.Run(step.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				s, cutter, plain := cutStores(t, b, redpacket.Config{})
				var mu sync.Mutex
				var expired []redpacket.Expiry
				const idle = 50 * time.Millisecond
				per := newPersister(t, s, db, redpacket.PersisterConfig{ClaimIdle: idle, OnExpired: func(e redpacket.Expiry) {
					mu.Lock()
					defer mu.Unlock()
					expired = append(expired, e)
				}})
				// The expire script is cached, and with it the others.
				require.NoError(t, plain.Create(ctx, redpacket.Packet{ID: "warm", Total: 1, Count: 1, TTL: time.Millisecond}))
				if step.name != "group" {
					time.Sleep(5 * time.Millisecond)
					_, err := per.Drain(ctx)
					require.NoError(t, err)
				}
				id := "p-" + step.name
				require.NoError(t, plain.Create(ctx, redpacket.Packet{ID: id, Total: 100, Count: 10, TTL: 300 * time.Millisecond}))
				claims := grabAll(t, plain, id, 4)
				time.Sleep(350 * time.Millisecond) // the packet expires
				if step.dead {
					// Another persister reads every entry and dies.
					_, err := b.Client.XReadGroup(ctx, &redis.XReadGroupArgs{Group: redpacket.DefaultGroup,
						Consumer: "dead", Streams: []string{keyOf(s, "log", ""), ">"}, Count: 100, Block: -1}).Result()
					require.NoError(t, err)
					time.Sleep(2 * idle)
				}
				words := step.words
				for i, w := range words {
					switch w {
					case "packet":
						words[i] = keyOf(s, "p", id)
					case "log":
						words[i] = keyOf(s, "log", "")
					}
				}
				cutter.Arm(1, words...)
				_, err := per.Drain(ctx)
				require.NoError(t, err)
				require.Equal(t, 1, cutter.Cuts(), "a reply was lost")

				assertPersisted(t, per, db, id, claims)
				pending, err := per.Pending(ctx)
				require.NoError(t, err)
				assert.Zero(t, pending, "every entry written and deleted")
				summary, err := b.Client.XPending(ctx, keyOf(s, "log", ""), redpacket.DefaultGroup).Result()
				require.NoError(t, err)
				assert.Zero(t, summary.Count, "nothing left unacked")
				mu.Lock()
				defer mu.Unlock()
				var mine []redpacket.Expiry
				for _, e := range expired {
					if e.PacketID == id {
						mine = append(mine, e)
					}
				}
				require.Len(t, mine, 1, "the expiry is logged and reported once")
				assert.Equal(t, 6, mine[0].Shares)
				var shares int64
				q := "SELECT unclaimed_shares FROM redpacket_packets WHERE packet_id = " + placeholder(db)
				require.NoError(t, db.DB.QueryRowContext(ctx, q, id).Scan(&shares))
				assert.Equal(t, int64(6), shares)
			})
		}
	})
}

// placeholder is db's first query placeholder.
func placeholder(db sqltest.Database) string {
	if dialect(db) == redpacket.Postgres {
		return "$1"
	}
	return "?"
}

// Run, whose read of new entries has its reply lost and is sent again,
// writes the entries that read took as soon as the log is quiet, not
// ClaimIdle (30s by default) later.
func TestRunWritesTheEntriesOfAReadSentTwice(t *testing.T) {
	b := redistest.Redis(t)
	db := sqltest.Database{Name: "sqlite", DB: sqltest.SQLite(t)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, cutter, plain := cutStores(t, b, redpacket.Config{})
	per := newPersister(t, s, db, redpacket.PersisterConfig{})
	_, err := per.Drain(ctx) // the group exists
	require.NoError(t, err)
	require.NoError(t, plain.Create(ctx, redpacket.Packet{ID: "run", Total: 100, Count: 10}))
	claims := grabAll(t, plain, "run", 5)

	cutter.Arm(1, "xreadgroup", ">")
	done := make(chan error, 1)
	go func() { done <- per.Run(ctx) }()
	require.Eventually(t, func() bool { return len(rows(t, db, "run")) == 5 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, 1, cutter.Cuts())
	assertPersisted(t, per, db, "run", claims)
	cancel()
	assert.NoError(t, <-done)
}
