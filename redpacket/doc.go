// Package redpacket hands out a red packet, an amount shared among the
// first users who grab it, on Redis: no share is given twice or beyond
// the count, each user gets at most one, and every share taken reaches a
// SQL database, exactly once as a row, through a durable claim log.
//
//	s, err := redpacket.New(client, redpacket.Config{})
//	err := s.Create(ctx, redpacket.Packet{ID: "p1", Total: 10000, Count: 100}) // ¥100.00 in 100 shares
//	c, err := s.Grab(ctx, "p1", userID) // again: the same Claim
//	shares, amount, err := s.Remaining(ctx, "p1")
//
//	p, err := redpacket.NewPersister(client, redpacket.PersisterConfig{DB: db, Dialect: redpacket.SQLite})
//	go p.Run(ctx) // claims to the database, acked after commit
//
// A common way to do this on Redis is a script that decrements a hash's
// stock and pushes "user-time" to a list, and, when the stock reaches 0,
// an in-process job that copies the list into MySQL and deletes it. This
// package fixes that scheme's flaws:
//
//   - Claims lost on a crash. Its list is deleted by a job nobody
//     retries. Here the grab script itself appends each claim to a Redis
//     Stream, and a Persister reads it through a consumer group, inserts a
//     batch in one transaction, and acks and deletes the entries only
//     after the commit. Entries a dead persister left unacked are
//     reclaimed (XAUTOCLAIM) and written again.
//   - No dedupe. It lets a user grab twice. Here a user's claim is
//     kept in the packet, and a second grab returns it; the database's
//     primary key (packet, user) makes every insert idempotent too.
//   - A missing packet fails the script ("attempt to compare nil with
//     number"). Here it is ErrNotFound, with nothing written.
//   - Key names built inside Lua, unsafe on Redis Cluster. Here every key
//     is passed in KEYS, and a packet's keys share a hash tag with its
//     shard's log, so one script can write both.
//   - Persistence waits for the stock to run out, so a packet that never
//     empties is never saved. Here claims are written as they come, and a
//     packet whose TTL passes is expired on the server's clock, its
//     unclaimed shares logged, written, and reported (see Expiry) so that
//     they can be refunded.
//   - Its shares are all the same amount. Here a packet is split Equal,
//     as there, or Random, as WeChat's.
//
// Concurrent Grabs of one packet, made through one Store, share one
// script call, which reads the packet once, takes their shares with one
// LPOP and logs their claims in one entry: the commands of one grab,
// whatever the crowd. Each caller gets what its Grab alone, in turn,
// would get, with its own error and Observer event; a Grab made alone
// goes at once, as its own call. Config.DisableCoalescing turns this off.
//
// Every write takes effect once, however often it is sent. go-redis
// sends a command again when its reply is lost (MaxRetries, 3 by
// default); a Create or Grab sent again finds what its first run wrote
// and answers as that run did, a script call of several Grabs answering
// each as its first run did, and so do the persister's writes. So after
// an error that leaves a call's outcome unknown (a timeout, a broken
// connection), call it again with the same arguments: Create returns nil
// once its packet is stored, and Grab returns the user's claim.
//
// The library itself imports only database/sql: the caller opens the
// database with the driver of its choice and names its Dialect (SQLite or
// Postgres); Schema is the tables.
package redpacket
