// Package recent keeps the last N items per owner on Redis, such as a
// user's recently viewed pages: newest first, in the order the server
// received them, deduplicated, capped atomically, with items that age out
// and lists that lapse, and pages to read.
//
//	l, err := recent.New(client, recent.Config{Key: "recent:" + userID, Max: 50, TTL: 30 * 24 * time.Hour})
//	...
//	err = l.Add(ctx, "/products/42")      // to the front; again moves it there
//	page, err := l.Items(ctx, 0, 10)      // the ten newest, newest first
//	n, err := l.Remove(ctx, "/products/42")
//
// A common way to keep such a list is a sorted set and one script that
// runs ZADD (the score: the client's clock in whole seconds), ZCARD, and
// ZREMRANGEBYRANK when the set is too long. A List keeps the sorted set
// and mends that script's flaws:
//
//   - Ties order by name. Items added in the same second have equal scores
//     and sort by their text, not by arrival, and a client whose clock is
//     off puts its items out of place. Here the score is the server's
//     clock, read in the script, to the microsecond, and an Add that
//     finds an item scored at that microsecond or later takes the next
//     score after the newest, so items keep the order in which the server
//     ran the Adds, those of one microsecond or of one Add included.
//   - A wasted read. The script counts the set before trimming it. Here
//     one ZREMRANGEBYRANK of the ranks below the newest Max trims it, in
//     the same script as the add, so no reader sees more than Max items.
//   - No expiry. The key lives for ever. Here Config.TTL makes a list
//     lapse after its last Add, and Config.MaxAge ages items out, on the
//     server's clock, in the scripts, with no background job; a list with
//     MaxAge lapses when all its items have aged out.
//   - No way to read it. Here Items reads pages, newest first; Remove takes
//     items out; Len counts.
//
// A List records its Max and MaxAge beside the list, with one SET on its
// first Add and at most once a minute after that, so that an operator's
// tools can read them with Recorded. The record lapses a minute after
// the list would, or, for a list that never lapses, a day after the Add
// that wrote it: such a list, unused for a day, keeps its items, but no
// longer says its bounds.
//
// A score is the server's time in whole microseconds since 1970: an
// integer, which a small sorted set keeps as one and compares without
// parsing text (see scripts/lib.lua).
//
// # Keys, and lists that script wrote
//
// A List keeps its sorted set under a name of its own, in its Key's Redis
// Cluster hash slot: Key with ":recent" added when Key has a hash tag
// ("{user:42}:views:recent"), and "{" + Key + "}/recent" when it has none
// ("{recent:42}/recent"). So a List never reads or changes what another
// package of this module, such as a slotlimit.Limiter, keeps at the same
// Key, nor they its items.
//
// A list that script wrote at a key is therefore not read by a List of
// that Key, which leaves it as it is. To take it over, rename it once to
// the List's key, e.g. RENAME recent:42 {recent:42}/recent (the two are
// in one hash slot, so this works on a Cluster too), and point that
// script's writers still running at the new key. Items then reads each
// of its items at the second it was scored with (items of one second in
// the order of their text, as that script left them), a List's Adds go
// after every item there, and its first Add trims it to Max. A score
// below 2^32 is read as seconds, so while that script's writers still run
// beside a List, their items sort below every item a List added (whose
// scores, in microseconds, are far above any count of seconds), by their
// second among that script's items: the trim drops them first, and
// MaxAge ages them out by their second. Items this package scored before
// it scored microseconds (seconds, with a binary fraction that holds the
// millisecond) read and age out the same way, at their millisecond.
//
// # All or nothing, and calls sent again
//
// Every call runs in one script, and all of it happens or none of it: a
// call that fails has written nothing. New refuses, with ErrInvalidConfig, a
// Max, TTL or MaxAge that a script could not use exactly (see MaxItems
// and MaxDuration), so no call fails half-way on one.
//
// go-redis sends a command again when its reply was lost
// (Options.MaxRetries, 3 by default), so the server may run one call
// twice. Add and Remove are safe to run twice, and to call again when
// their error matches ErrOutcomeUnknown: the list holds the values one call
// would leave. What a second run changes is said exactly in their docs: a
// re-sent Add gives its values the time of the second run, which puts
// them in front of items added between the runs, and a re-sent Remove
// counts only what the second run found, never more than was removed.
// Items and Len write nothing.
//
// # Many callers on one list
//
// Concurrent Adds of at most 4 values each, made through one List, go to
// Redis as one script call: the first that finds none of its List's Adds
// in flight is sent at once, and those made while one is in flight go
// together when it returns, up to 64 of them (on a list whose Max is under
// 128, only as many as keep it in Redis's compact form, and from a Max of
// 121, none). The script runs them in turn, in the order they were made,
// at one reading of the server's clock, as Adds made one after the other
// in one microsecond: the list ends as they would leave it. Concurrent
// Removes of at most 4 values each go together the same way, and each
// counts what it finds when its turn comes. Each caller gets its own error
// and Observer event; one whose ctx ends while it waits for its turn
// returns ctx's error with nothing sent, and one whose ctx ends while its
// script call is in flight returns at once with ErrOutcomeUnknown. A
// script call that go-redis sends again runs each of its calls again, as a
// single call sent again runs. Config.DisableCoalescing sends each call on
// its own.
//
// A list is one key, which an emptied list deletes. A key of another type
// there fails every call with WRONGTYPE and is left as it was.
//
// # Failovers and moving slots
//
// On a Redis Cluster, every call follows the Cluster as it changes: a
// redirect is followed, and a slot in the middle of a move is tried again
// until the call's context ends. Replication is asynchronous: an
// operator's CLUSTER FAILOVER loses nothing, since the replica catches up
// first, but a forced takeover can lose the last writes the old master
// acknowledged: items added there are lost, and items removed there come back.
package recent
