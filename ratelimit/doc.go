// Package ratelimit limits how often an event may happen, across every
// process that shares one Redis: per user, per tenant, per API key, with
// any number of limits checked together in one atomic call.
//
//	limiter, err := ratelimit.New(client, ratelimit.Config{})
//	...
//	res, err := limiter.Allow(ctx, "user:42", ratelimit.PerSecond(10))
//	if err != nil {
//		return err // Redis failed: the caller chooses to fail open or closed
//	}
//	if !res.Allowed {
//		return tooManyRequests(res.RetryAfter) // nothing was counted
//	}
//
// Two algorithms share one API (see Algorithm). GCRA, the default, spaces
// events evenly at Rate per Period and lets up to Burst through at once;
// it keeps one string, the theoretical arrival time, under a name of its
// own beside the key ("{k}/ratelimit" for a key "k", "{t}:k:ratelimit" for
// a key "{t}:k" with a hash tag), in the key's hash slot, and lets it
// lapse when the key is back to its full allowance. FixedWindow is the classic
// fixed-window counter: the key holds a plain integer, the count of the
// current window, whose expiry is the window.
//
// Every decision is one Lua script (scripts/), on the Redis server's clock,
// so the limit holds under any interleaving of callers and callers with
// skewed clocks agree. AllowAll checks several limits at once, all or
// nothing, in one round trip, for keys that share a Redis Cluster hash
// slot.
//
// Concurrent calls on one key share a script call. Allow and AllowN calls
// made at the same time through one Limiter, with one key, Limit and n,
// go to Redis together: a call that finds none of them in flight is sent
// at once, alone, and the calls that arrive while one is in flight are
// sent together, up to 256, as one script call, when it returns. That
// script decides them in turn, each exactly as it would be decided alone,
// made right after the one before it, and each caller gets its own
// Result, its own error and its own Observer event. A crowd on one key is
// then served by a few script calls instead of one per caller, each of
// them reading the clock and the key once and writing the key once, and
// nothing else changes for a caller: a call whose ctx ends while it waits
// for its turn returns ctx's error with nothing sent; one whose ctx ends
// while its batch is in flight returns at once with ctx's error, its
// outcome unknown; a key of another type fails every call of a batch, as
// it fails each alone; bad input is refused before a call waits for
// anything. Config.DisableCoalescing sends each call as its own script
// call. AllowAll and Reset are always their own.
//
// The classic script counts with INCR and sets the window with EXPIRE on
// the first hit. FixedWindow keeps that data exactly, so such a script and
// this package can share a key and the limit holds between them, and it
// fixes the script's flaws:
//
//   - Bursts: a fixed window lets up to twice the rate through across a
//     window's edge. GCRA has no edges: in any stretch of time t it allows
//     at most Burst + t×Rate/Period events. FixedWindow keeps the flaw, as
//     its data must; choose it only to share a key with such a script.
//   - A refused call still counts: the script's INCR runs before the
//     check. Here a refused call counts nothing, with either algorithm,
//     and the script's refusals then merely make its key stricter.
//   - Keys that never expire: a copy of the pattern that sends INCR and
//     EXPIRE as two calls can leave a count with no expiry, which blocks
//     its user for ever (redis/redis#4423). FixedWindow gives such a key
//     the window as its expiry the next time it meets it; every key this
//     package writes has an expiry.
//   - Answers: the script returns a count. Result says whether the call was
//     allowed, how many more would be allowed now, how long to wait before
//     the same call can succeed, and when the key is back to full.
//
// A call whose reply is lost may run twice. go-redis sends a command again
// when its reply was cut off (MaxRetries, 3 by default), so one Allow can
// run its script more than once. A call carries no identity that a second
// run could recognise: a re-send counts the events again. Each run checks
// the limit against everything counted before it, the first run included,
// so a re-send can refuse early but never admits beyond the limit, and an
// answer of allowed always means the events were counted. A batch of
// calls sent again counts each of its calls again, in the same way. In numbers: of
// a limit of 3, one Allow whose reply was lost once takes 2 and answers
// allowed; one that finds 1 left takes it and answers refused. A re-sent
// Reset deletes again, as of the re-send. See Limiter.AllowN and
// Limiter.Reset.
//
// Errors: bad input matches ErrInvalidArgument (ErrInvalidKey, ErrInvalidN,
// ErrInvalidLimit and ErrCrossSlot all do), with nothing sent; a Limiter
// not made by New returns ErrInvalidConfig; and a call that was sent but
// got no answer returns an error matching ErrOutcomeUnknown, the value
// every package of the module shares. Calling again with the same
// arguments is safe, in the direction just described. Config.Observer
// hears each call's outcome.
//
// Keys: a FixedWindow keeps its count at the key itself, the classic
// script's layout. A GCRA limit keeps its time at this package's name
// beside the key, so that it never meets another package's data there: a
// slotlimit.Limiter, a lock or a recent list given the same key is left
// alone. A key that itself ends in that name (as "{k}/ratelimit") is
// refused with ErrInvalidKey, and so, for GCRA, is a key with a '}' but no
// hash tag.
//
// The rate record: a Limiter keeps the limit it last used on a key
// beside it, at "{k}/ratelimit:rate" beside a key k ("{t}:k:ratelimit:rate"
// beside a key "{t}:k"), as "algorithm=gcra&burst=10&period=1000&rate=10"
// (algorithm gcra or fixed-window, period in ms), so that an operator
// reads it without being told (Limiter.Limit, and the slotlimit command's
// rate show). It writes it at most once a minute per key, inside the
// script call an Allow or AllowN makes anyway (an AllowAll sends its
// rules' records in one pipeline before its script, when due), and it
// expires a minute after the key's data can last lapse: the full burst's
// time for GCRA, the Period for a FixedWindow. A FixedWindow key with a
// '}' but no hash tag has no name beside it, and no record. The record
// never fails a call: a Redis user whose ACL does not grant its name has
// the call that carried it sent again at once without it (Redis refused
// it before running anything), and the record is tried again a minute
// later. Limiter.Inspect reads a key's state under a limit and writes
// nothing.
//
// Precision: GCRA keeps its rate exactly. Time in its scripts is in
// microseconds, the server's clock, and one event's share of a period
// (Period/Rate) is kept as a fraction in lowest terms, so a share that is
// not a whole µs (3 per second is 333,333⅓µs, 999,999 per second is
// 1 1/999,999µs) keeps its remainder: n events move the theoretical
// arrival time by exactly n×Period/Rate, and a caller who takes every
// event as soon as it may gets Burst + t×Rate/Period of them in any time
// t, rounded down, at any Rate up to one event per µs. The waits reported
// (RetryAfter, ResetAfter) are rounded up to the µs. A Burst of 1 spaces
// events a share apart on a clock of whole µs, so a share that is not a
// whole µs is in effect rounded up; a Limit for which that is more than
// 1% slow is refused with an InexactLimitError that names the nearest
// Limit kept exactly (the same with a Burst of 2). FixedWindow keeps its
// window as a key expiry in milliseconds, and counts exactly.
//
// # Failovers and moving slots
//
// On a Redis Cluster, every call follows the Cluster as it changes: a
// redirect is followed, and a slot in the middle of a move is tried again
// until the call's context ends. Replication is asynchronous: an
// operator's CLUSTER FAILOVER loses nothing, since the replica catches up
// first, but a forced takeover can lose the last writes the old master
// acknowledged: a few events counted there are forgotten, so a little more than the limit may pass.
package ratelimit
