package redpacket_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/slotlimit/slotlimit/redpacket"
)

// exampleStart is the time on the examples' Redis clock.
var exampleStart = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// exampleRedis starts an in-process Redis whose clock stands still at
// exampleStart, so the examples' output does not depend on the time they
// run. Real code passes its own client.
func exampleRedis() (*redis.Client, *miniredis.Miniredis) {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	mr.SetTime(exampleStart)
	return redis.NewClient(&redis.Options{Addr: mr.Addr()}), mr
}

// A packet of ¥10.00 in 3 equal shares: the first three users get one
// each, a user who grabs again gets the same share, and the fourth user
// finds it sold out.
func Example() {
	client, mr := exampleRedis()
	defer mr.Close()
	ctx := context.Background()

	store, err := redpacket.New(client, redpacket.Config{})
	if err != nil {
		panic(err)
	}
	err = store.Create(ctx, redpacket.Packet{ID: "p1", Total: 1000, Count: 3, Split: redpacket.Equal})
	if err != nil {
		panic(err)
	}
	for _, user := range []string{"alice", "bob", "alice", "carol", "dave"} {
		c, err := store.Grab(ctx, "p1", user)
		switch {
		case errors.Is(err, redpacket.ErrSoldOut):
			fmt.Printf("%s: sold out\n", user)
		case err != nil:
			panic(err)
		default:
			fmt.Printf("%s: share %d, ¥%d.%02d, at %s\n", c.User, c.Seq, c.Amount/100, c.Amount%100, c.At.UTC().Format(time.TimeOnly))
		}
	}
	shares, amount, err := store.Remaining(ctx, "p1")
	if err != nil {
		panic(err)
	}
	fmt.Println("left:", shares, "shares,", amount, "cents")

	// Output:
	// alice: share 1, ¥3.34, at 12:00:00
	// bob: share 2, ¥3.33, at 12:00:00
	// alice: share 1, ¥3.34, at 12:00:00
	// carol: share 3, ¥3.33, at 12:00:00
	// dave: sold out
	// left: 0 shares, 0 cents
}

// A Random packet cuts its shares by the double-mean method: each differs,
// and together they are the Total. A packet whose TTL has passed gives no
// more shares; those left are for refund.
func ExampleStore_Grab() {
	client, mr := exampleRedis()
	defer mr.Close()
	ctx := context.Background()

	store, err := redpacket.New(client, redpacket.Config{})
	if err != nil {
		panic(err)
	}
	err = store.Create(ctx, redpacket.Packet{ID: "p2", Total: 10000, Count: 5, Split: redpacket.Random, TTL: time.Hour})
	if err != nil {
		panic(err)
	}
	var sum int64
	for _, user := range []string{"u1", "u2", "u3"} {
		c, err := store.Grab(ctx, "p2", user)
		if err != nil {
			panic(err)
		}
		sum += c.Amount
	}
	_, left, err := store.Remaining(ctx, "p2")
	if err != nil {
		panic(err)
	}
	fmt.Println("taken and left add up to the Total:", sum+left == 10000)

	mr.SetTime(exampleStart.Add(2 * time.Hour)) // the packet's hour has passed
	_, err = store.Grab(ctx, "p2", "u4")
	fmt.Println("u4:", errors.Is(err, redpacket.ErrExpired))
	shares, _, err := store.Remaining(ctx, "p2")
	if err != nil {
		panic(err)
	}
	fmt.Println("shares to refund:", shares)

	// Output:
	// taken and left add up to the Total: true
	// u4: true
	// shares to refund: 2
}

// A Persister writes every claim to SQL, once, from the claim log the
// grab itself appends to; Reconcile checks that Redis and the database
// agree. A service runs Persister.Run; Drain writes what the log holds
// now.
func ExamplePersister_Drain() {
	client, mr := exampleRedis()
	defer mr.Close()
	ctx := context.Background()

	db, err := sql.Open("sqlite", "file:claims?mode=memory&cache=shared")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := redpacket.CreateSchema(ctx, db); err != nil {
		panic(err)
	}

	store, err := redpacket.New(client, redpacket.Config{})
	if err != nil {
		panic(err)
	}
	if err := store.Create(ctx, redpacket.Packet{ID: "p3", Total: 600, Count: 3, Split: redpacket.Equal}); err != nil {
		panic(err)
	}
	for _, user := range []string{"alice", "bob"} {
		if _, err := store.Grab(ctx, "p3", user); err != nil {
			panic(err)
		}
	}

	persister, err := redpacket.NewPersister(client, redpacket.PersisterConfig{DB: db, Dialect: redpacket.SQLite})
	if err != nil {
		panic(err)
	}
	n, err := persister.Drain(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("log entries written:", n) // the packet and its two claims

	rows, err := db.QueryContext(ctx, "SELECT user_id, amount, seq FROM redpacket_claims WHERE packet_id = ? ORDER BY seq", "p3")
	if err != nil {
		panic(err)
	}
	defer rows.Close()
	for rows.Next() {
		var user string
		var amount, seq int64
		if err := rows.Scan(&user, &amount, &seq); err != nil {
			panic(err)
		}
		fmt.Printf("row: %s took share %d, %d cents\n", user, seq, amount)
	}
	if err := rows.Err(); err != nil {
		panic(err)
	}

	r, err := persister.Reconcile(ctx, "p3")
	if err != nil {
		panic(err)
	}
	fmt.Printf("Redis has %d claims, the database %d rows; they agree: %v\n", r.Claims, r.Rows, r.OK())

	// Output:
	// log entries written: 3
	// row: alice took share 1, 200 cents
	// row: bob took share 2, 200 cents
	// Redis has 2 claims, the database 2 rows; they agree: true
}
