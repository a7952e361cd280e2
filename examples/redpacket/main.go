// Command redpacket hands out a red packet to 10,000 users at once and
// checks that every share taken reached the database, once.
//
// A packet of ¥1,000.00 in 1,000 shares, split at random, is grabbed by
// 10,000 users, each with an id of their own, from a pool of 32
// goroutines; one user in ten grabs twice and must get the same claim
// back. A second packet, ¥50.00 in 30 equal shares with a 2s TTL, is
// grabbed by only 12 users, so it expires with 18 shares unclaimed, which
// the persister writes to the packet's row and reports for refund. A
// redpacket.Persister runs alongside, as in a service, writing the claims
// to SQL as they come. Each second the program prints the grabs so far,
// the claims taken, the grabs refused because the packet sold out, the
// claim rows in the database and what is left of the packet.
//
// At the end it waits, at most 10s, for the persister to catch up, stops
// it, and checks: exactly 1,000 claims, summing to ¥1,000.00, no user
// twice, nothing left in Redis, a row for each claim and no other (see
// Persister.Reconcile), and the expired packet's unclaimed shares in its
// row. It ends with a verdict, PASS or FAIL, and exits 1 on FAIL. The
// whole run is bounded by 60s.
//
// By default it runs on an embedded miniredis and an embedded SQLite
// database (modernc.org/sqlite) in a temporary file, removed at the end:
//
//	go run ./examples/redpacket
//
// -redis runs it against a real server (loopback only), on keys of its
// own, deleted at the end; -db keeps the SQLite database in a file of
// your choice; -postgres writes to PostgreSQL instead, creating the
// tables if missing and leaving the run's rows there:
//
//	go run ./examples/redpacket -redis 127.0.0.1:6379 -db /tmp/redpacket.db
//	go run ./examples/redpacket -postgres 'postgres://user@127.0.0.1:5432/db?sslmode=disable'
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/examplefmt"
	"github.com/slotlimit/slotlimit/internal/exampleredis"
	"github.com/slotlimit/slotlimit/redpacket"
)

// The packets.
const (
	bigTotal = 100_000 // ¥1,000.00
	bigCount = 1_000

	smallTotal    = 5_000 // ¥50.00
	smallCount    = 30
	smallTTL      = 2 * time.Second
	smallGrabbers = 12 // the first users grab it too
)

const (
	runBound    = 60 * time.Second       // the whole run
	callTimeout = 2 * time.Second        // each call to Redis or the database
	catchUp     = 10 * time.Second       // the wait for the persister at the end
	lineTimeout = 500 * time.Millisecond // the queries behind a progress line
)

func main() {
	log.SetFlags(0)
	var o options
	flag.StringVar(&o.redisAddr, "redis", "", "Redis `host:port` or redis:// URL (loopback); empty runs an embedded miniredis")
	flag.StringVar(&o.dbPath, "db", "", "SQLite database `file`, kept; empty uses a temporary file")
	flag.StringVar(&o.postgres, "postgres", "", "PostgreSQL `DSN` to write to instead of SQLite")
	flag.IntVar(&o.users, "users", 10_000, "users grabbing the packet")
	flag.IntVar(&o.workers, "workers", 32, "goroutines the users' grabs run on")
	flag.DurationVar(&o.spread, "spread", 3*time.Second, "time over which the users arrive")
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(o); err != nil {
		log.Printf("FAIL: %v", err)
		os.Exit(1)
	}
}

// options are the command-line flags.
type options struct {
	redisAddr, dbPath, postgres string
	users, workers              int
	spread                      time.Duration
}

// run runs the example, and returns an error if it could not run or
// failed its checks.
func run(o options) error {
	if o.users < bigCount || o.workers < 1 || o.spread < 0 {
		return fmt.Errorf("-users must be at least %d, -workers at least 1, -spread not negative", bigCount)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runBound)
	defer cancel()
	addr, real, err := redisAddr(o.redisAddr)
	if err != nil {
		return err
	}
	addr, stopRedis, err := exampleredis.Open(addr)
	if err != nil {
		return err
	}
	defer stopRedis()
	client := redis.NewClient(&redis.Options{Addr: addr, PoolSize: o.workers + 8})
	defer client.Close()
	if err := client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("connect to redis %s: %w", addr, err)
	}
	db, err := openDB(ctx, o.dbPath, o.postgres)
	if err != nil {
		return err
	}
	defer db.close()
	if err := redpacket.CreateSchema(ctx, db.db); err != nil {
		return fmt.Errorf("create the schema: %w", err)
	}

	// Keys and packet ids of the run's own, so that a real Redis or a
	// kept database may hold other runs'.
	runID := strconv.FormatInt(time.Now().UnixNano(), 36)
	prefix := "example:redpacket:" + runID
	cfg := redpacket.Config{Prefix: prefix}
	store, err := redpacket.New(client, cfg)
	if err != nil {
		return err
	}
	if real {
		defer deleteKeys(client, prefix)
	}
	s := &scenario{
		opts: o, store: store, db: db,
		big: "gala-" + runID, small: "team-" + runID,
		claims: make(map[string]redpacket.Claim), smallClaims: make(map[string]redpacket.Claim),
		expired: make(chan redpacket.Expiry, 8),
	}
	s.persister, err = redpacket.NewPersister(client, redpacket.PersisterConfig{
		Store: cfg, DB: db.db, Dialect: db.dialect, Consumer: "example",
		OnExpired: func(e redpacket.Expiry) {
			fmt.Printf("expired: %s, %d shares unclaimed; refund %s to its sender\n", e.PacketID, e.Shares, yuan(e.Amount))
			select {
			case s.expired <- e:
			default:
			}
		},
		OnError: func(err error) {
			if s.persistErrs.Add(1) <= 5 {
				log.Printf("persister (retrying): %v", err)
			}
		},
	})
	if err != nil {
		return err
	}
	where := "embedded miniredis"
	if real {
		where = "redis " + addr
	}
	fmt.Printf("redpacket: %s users on %d goroutines, arriving over %v; %s and %s\n",
		examplefmt.Int(int64(o.users)), o.workers, o.spread, where, db.name)

	runCtx, stopPersister := context.WithCancel(ctx)
	defer stopPersister()
	persisted := make(chan error, 1)
	go func() { persisted <- s.persister.Run(runCtx) }()

	if err := s.create(ctx); err != nil {
		return err
	}
	lineCtx, stopLines := context.WithCancel(ctx)
	var lines sync.WaitGroup
	lines.Go(func() { s.progress(lineCtx) })
	s.grab(ctx)
	caughtUp := s.finish(ctx)
	stopLines()
	lines.Wait()

	stopPersister()
	select {
	case err := <-persisted:
		if err != nil {
			return fmt.Errorf("persister: %w", err)
		}
	case <-time.After(3 * time.Second):
		return errors.New("the persister did not stop within 3s")
	}
	return s.check(ctx, caughtUp)
}

// redisAddr returns the host:port of flag, which may be a redis:// URL,
// and whether it names a real server.
func redisAddr(flag string) (addr string, real bool, err error) {
	if flag == "" {
		return "", false, nil
	}
	if strings.Contains(flag, "://") {
		opt, err := redis.ParseURL(flag)
		if err != nil {
			return "", false, fmt.Errorf("-redis %s: %w", flag, err)
		}
		flag = opt.Addr
	}
	return flag, true, nil
}

// deleteKeys deletes the keys of the run's Store from a real server:
// every one of them begins with "{" and its prefix.
func deleteKeys(client *redis.Client, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := client.Scan(ctx, 0, "{"+prefix+":*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		log.Printf("list the run's keys: %v", err)
	}
	for _, k := range keys {
		if err := client.Del(ctx, k).Err(); err != nil {
			log.Printf("delete %s: %v", k, err)
		}
	}
}

// A scenario is the two packets, the users who grab them, and what they
// got.
type scenario struct {
	opts       options
	store      *redpacket.Store
	persister  *redpacket.Persister
	db         *database
	big, small string // packet ids
	start      time.Time

	grabs       atomic.Int64 // grabs of the big packet, repeats included
	soldOut     atomic.Int64 // first grabs refused: sold out
	repeats     atomic.Int64 // second grabs
	persistErrs atomic.Int64
	expired     chan redpacket.Expiry

	mu          sync.Mutex
	claims      map[string]redpacket.Claim // big packet, by user
	smallClaims map[string]redpacket.Claim
	problems    []string // a repeat that differed, an unexpected error
}

// create creates the two packets.
func (s *scenario) create(ctx context.Context) error {
	for _, p := range []redpacket.Packet{
		{ID: s.big, Total: bigTotal, Count: bigCount, Split: redpacket.Random},
		{ID: s.small, Total: smallTotal, Count: smallCount, Split: redpacket.Equal, TTL: smallTTL},
	} {
		if err := s.store.Create(ctx, p); err != nil {
			return fmt.Errorf("create %s: %w", p.ID, err)
		}
		ttl := p.TTL
		if ttl == 0 {
			ttl = redpacket.DefaultTTL
		}
		fmt.Printf("created %s: %s in %s %s shares, TTL %v\n", p.ID, yuan(p.Total), examplefmt.Int(int64(p.Count)), p.Split, ttl)
	}
	s.start = time.Now()
	return nil
}

// grab lets every user grab the big packet, user i no sooner than
// i/users of spread after the start, and returns when all have.
func (s *scenario) grab(ctx context.Context) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range s.opts.workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= s.opts.users || ctx.Err() != nil {
					return
				}
				at := s.start.Add(s.opts.spread * time.Duration(i) / time.Duration(s.opts.users))
				if !sleep(ctx, time.Until(at)) {
					return
				}
				s.user(ctx, i)
			}
		})
	}
	wg.Wait()
}

// user is what user i does: the first smallGrabbers grab the small packet;
// every user grabs the big one, and one in ten grabs it again.
func (s *scenario) user(ctx context.Context, i int) {
	user := fmt.Sprintf("user-%05d", i+1)
	if i < smallGrabbers {
		if c, err := s.grabOnce(ctx, s.small, user); err == nil {
			s.mu.Lock()
			s.smallClaims[user] = c
			s.mu.Unlock()
		} else {
			s.problem("%s's grab of %s: %v", user, s.small, err)
		}
	}
	c, err := s.grabOnce(ctx, s.big, user)
	s.grabs.Add(1)
	switch {
	case err == nil:
		s.mu.Lock()
		s.claims[user] = c
		s.mu.Unlock()
	case errors.Is(err, redpacket.ErrSoldOut):
		s.soldOut.Add(1)
	default:
		s.problem("%s's grab: %v", user, err)
		return
	}
	if i%10 != 0 {
		return
	}
	again, err2 := s.grabOnce(ctx, s.big, user)
	s.grabs.Add(1)
	s.repeats.Add(1)
	// The same claim, or sold out again: err is nil or ErrSoldOut.
	same := err == nil && err2 == nil || err != nil && errors.Is(err2, redpacket.ErrSoldOut)
	if again != c || !same {
		s.problem("%s grabbed again and got %+v, %v; the first grab got %+v, %v", user, again, err2, c, err)
	}
}

func (s *scenario) grabOnce(ctx context.Context, packetID, user string) (redpacket.Claim, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return s.store.Grab(ctx, packetID, user)
}

// problem records a failure seen while the users grab.
func (s *scenario) problem(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

// progress prints a line each second until ctx is done. A query that
// fails, or takes over lineTimeout, shows as "?".
func (s *scenario) progress(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.mu.Lock()
		claims := len(s.claims)
		s.mu.Unlock()
		qctx, cancel := context.WithTimeout(ctx, lineTimeout)
		rows, left := "?", "?"
		if n, _, _, err := s.db.claimRows(qctx, s.big); err == nil {
			rows = examplefmt.Int(int64(n))
		}
		if shares, amount, err := s.store.Remaining(qctx, s.big); err == nil {
			left = fmt.Sprintf("%s shares, %s", examplefmt.Int(int64(shares)), yuan(amount))
		}
		cancel()
		fmt.Printf("%3.0fs  grabs %6s  claims %5s  sold out %6s  rows %5s  left %s\n",
			time.Since(s.start).Seconds(), examplefmt.Int(s.grabs.Load()), examplefmt.Int(int64(claims)),
			examplefmt.Int(s.soldOut.Load()), rows, left)
	}
}

// finish waits for the small packet to expire and be reported, shows the
// grabs of an expired packet, then waits for the persister to have
// written every claim and the expiry. It reports whether the persister
// caught up within catchUp.
func (s *scenario) finish(ctx context.Context) (caughtUp bool) {
	fmt.Printf("%3.0fs  every user has grabbed; waiting for %s to expire\n", time.Since(s.start).Seconds(), s.small)
	select {
	case <-s.expired:
	case <-time.After(time.Until(s.start.Add(smallTTL + catchUp))):
		s.problem("%s's expiry was not reported within %v of its TTL", s.small, catchUp)
	case <-ctx.Done():
		return false
	}

	// Once expired, the packet refuses a newcomer, and gives a user who
	// claimed the same claim back; so does a sold-out one.
	if _, err := s.grabOnce(ctx, s.small, "late-user"); !errors.Is(err, redpacket.ErrExpired) {
		s.problem("a newcomer's grab of %s after it expired: %v, want %v", s.small, err, redpacket.ErrExpired)
	}
	s.mu.Lock()
	first, big := s.smallClaims["user-00001"], s.claims["user-00001"]
	s.mu.Unlock()
	if c, err := s.grabOnce(ctx, s.small, "user-00001"); err != nil || c != first {
		s.problem("user-00001 grabbed %s again after it expired: %+v, %v; want %+v", s.small, c, err, first)
	}
	if c, err := s.grabOnce(ctx, s.big, "user-00001"); c != big || err != nil && !(errors.Is(err, redpacket.ErrSoldOut) && big == redpacket.Claim{}) {
		s.problem("user-00001 grabbed %s again after it sold out: %+v, %v; want %+v", s.big, c, err, big)
	}

	deadline := time.Now().Add(catchUp)
	for {
		if s.persisted(ctx) {
			fmt.Printf("%3.0fs  the database holds every claim and the expiry; stopping the persister\n", time.Since(s.start).Seconds())
			return true
		}
		if time.Now().After(deadline) || !sleep(ctx, 50*time.Millisecond) {
			return false
		}
	}
}

// persisted reports whether the database has a row for every claim
// returned, and the small packet's unclaimed shares.
func (s *scenario) persisted(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	s.mu.Lock()
	want, wantSmall := len(s.claims), len(s.smallClaims)
	s.mu.Unlock()
	n, _, _, err1 := s.db.claimRows(ctx, s.big)
	m, _, _, err2 := s.db.claimRows(ctx, s.small)
	_, _, expired, err3 := s.db.unclaimed(ctx, s.small)
	return err1 == nil && err2 == nil && err3 == nil && n == want && m == wantSmall && expired
}

// check compares what the users got, Redis and the database, prints the
// result, and returns an error listing the failures.
func (s *scenario) check(ctx context.Context, caughtUp bool) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s.mu.Lock()
	problems := s.problems
	claims, smallClaims := s.claims, s.smallClaims
	s.mu.Unlock()
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if !caughtUp {
		fail("the persister had not written every claim and the expiry %v after the last grab", catchUp)
	}

	// What the users got.
	var sum int64
	seqs := make(map[int]bool)
	for _, c := range claims {
		sum += c.Amount
		seqs[c.Seq] = true
	}
	users := int64(s.opts.users)
	fmt.Printf("grabs: %s by %s users (%s of them twice, each the same both times); %s claims, %s refused: sold out\n",
		examplefmt.Int(s.grabs.Load()), examplefmt.Int(users), examplefmt.Int(s.repeats.Load()), examplefmt.Int(int64(len(claims))), examplefmt.Int(s.soldOut.Load()))
	if len(claims) != bigCount || sum != bigTotal || len(seqs) != bigCount {
		fail("%d claims (%d distinct seqs) summing to %s; want %d summing to %s", len(claims), len(seqs), yuan(sum), bigCount, yuan(bigTotal))
	}
	if got := s.soldOut.Load(); got != users-bigCount {
		fail("%d grabs refused as sold out, want %d", got, users-bigCount)
	}

	// Redis.
	shares, amount, err := s.store.Remaining(ctx, s.big)
	fmt.Printf("redis: %s has %d shares left (%s)\n", s.big, shares, yuan(amount))
	if err != nil || shares != 0 || amount != 0 {
		fail("Remaining(%s) = %d, %s, %v; want 0, ¥0.00", s.big, shares, yuan(amount), err)
	}

	// The database.
	rows, distinct, rowSum, err := s.db.claimRows(ctx, s.big)
	fmt.Printf("database: %s claim rows of %s, %s users, summing to %s\n", examplefmt.Int(int64(rows)), s.big, examplefmt.Int(int64(distinct)), yuan(rowSum))
	if err != nil || rows != bigCount || distinct != bigCount || rowSum != bigTotal {
		fail("the database holds %d rows of %s, %d users, summing to %s (%v); want %d summing to %s",
			rows, s.big, distinct, yuan(rowSum), err, bigCount, yuan(bigTotal))
	}
	for _, id := range []string{s.big, s.small} {
		r, err := s.persister.Reconcile(ctx, id)
		if err != nil {
			fail("reconcile %s: %v", id, err)
			continue
		}
		fmt.Printf("reconcile %s: %d claims in redis, %d rows; %d missing, %d extra, %d differ; ok %v\n",
			id, r.Claims, r.Rows, len(r.Missing), len(r.Extra), len(r.Differ), r.OK())
		if !r.OK() || r.Rows != r.Claims {
			fail("reconcile %s: %d missing, %d extra, %d differ", id, len(r.Missing), len(r.Extra), len(r.Differ))
		}
	}

	// The expired packet: what Redis has left, in its row.
	var taken int64
	for _, c := range smallClaims {
		taken += c.Amount
	}
	wantShares, wantAmount := smallCount-len(smallClaims), smallTotal-taken
	shares, amount, err = s.store.Remaining(ctx, s.small)
	rowShares, rowAmount, expired, err2 := s.db.unclaimed(ctx, s.small)
	fmt.Printf("expired %s: %d of %d shares claimed (%s); unclaimed in redis %d (%s), in its row %d (%s)\n",
		s.small, len(smallClaims), smallCount, yuan(taken), shares, yuan(amount), rowShares, yuan(rowAmount))
	switch {
	case len(smallClaims) != smallGrabbers:
		fail("%d claims of %s, want %d", len(smallClaims), s.small, smallGrabbers)
	case err != nil || shares != wantShares || amount != wantAmount:
		fail("Remaining(%s) = %d, %s, %v; want %d, %s", s.small, shares, yuan(amount), err, wantShares, yuan(wantAmount))
	case err2 != nil || !expired || rowShares != wantShares || rowAmount != wantAmount:
		fail("the row of %s has unclaimed %d, %s (expired %v, %v); want %d, %s",
			s.small, rowShares, yuan(rowAmount), expired, err2, wantShares, yuan(wantAmount))
	}

	if n := s.persistErrs.Load(); n > 0 {
		fmt.Printf("persister errors, retried: %d\n", n)
	}
	if len(problems) > 0 {
		if len(problems) > 10 {
			problems = append(problems[:10], fmt.Sprintf("and %d more", len(problems)-10))
		}
		return errors.New(strings.Join(problems, "; "))
	}
	fmt.Printf("PASS: %s users, %s claims summing to %s, none twice, 0 left; %s rows match redis; %s's %d unclaimed shares (%s) in its row, for refund; %.1fs\n",
		examplefmt.Int(users), examplefmt.Int(bigCount), yuan(bigTotal), examplefmt.Int(int64(rows)), s.small, wantShares, yuan(wantAmount),
		time.Since(s.start).Seconds())
	return nil
}

// sleep waits for d and reports whether it did so before ctx was done.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// yuan formats an amount in cents: ¥1,000.00.
func yuan(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s¥%s.%02d", sign, examplefmt.Int(cents/100), cents%100)
}
