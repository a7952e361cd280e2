// Package lock is a distributed mutex on Redis: one owner at a time among
// every process that shares its key, with a lease that lapses on the
// server's clock, fencing tokens, a watchdog, and waiters woken by the
// unlock rather than by polling.
//
//	m, err := lock.New(client, lock.Config{Key: "jobs:nightly", TTL: 30 * time.Second})
//	...
//	l, err := m.Lock(ctx) // waits; TryLock never does
//	if err != nil {
//		return err
//	}
//	defer l.Unlock(context.WithoutCancel(ctx))
//	ctx = l.KeepAlive(ctx) // renews every TTL/3; cancelled if the lock is lost
//	return store.Write(ctx, l.Fence(), data)
//
// The lock is a plain string at the key, holding the owner's token with
// a PX expiry: the data redislock, redsync and the classic SET NX PX (or
// SETNX and PEXPIRE) scripts with a compare-and-delete unlock keep, so
// that they and a Mutex keep each other out on one key. A Lock that waits
// behind a Mutex's owner puts a '+' after that owner's token, so that the
// owner's Unlock looks for waiters only then and otherwise runs the two
// commands of a bare compare-and-delete; another client's token is never
// changed. What it adds to
// those scripts:
//
//   - Every operation is one script of its own (scripts/), and none calls
//     another: Redis refuses redis.call('eval', ...) inside a script.
//   - A lock that is not obtained is reported: TryLock returns
//     ErrNotObtained, and Lock waits for the lock without polling.
//   - A lock whose work outlasts its TTL is renewed: KeepAlive renews it,
//     and its context ends, with cause ErrNotHeld, if the lock is lost.
//   - An owner that paused past its TTL can be stopped from writing after
//     a new owner took the lock: every owner gets a fence, a number that
//     grows with every owner (see Lock.Fence), for storage to refuse the
//     writes of an owner that no longer holds the lock.
//
// A lock is not needed around one INCR, which is atomic already: use INCR,
// or slotlimit.Counter for a counter with a limit; take a lock for work
// that one process at a time must do.
//
// The owner description (Config.Owner: the host's name and the process
// ID by default) is kept beside the key, never in it, so that the string
// at the key stays the bare token: a Mutex has a handle ID, the first 10
// characters of each of its tokens, which the Mutexes of one process with
// one description and TTL share (no other process can tell it in
// advance), and keeps its description at "{k}/lock:owner:ID" beside a key
// k. The Mutexes of a process on one client (a *redis.Client,
// *redis.ClusterClient or *redis.Ring; on a client of another type, each
// Mutex on its own) write it at most once a minute between them, however
// many there are, inside a TryLock, a waiter's try or a Refresh they send
// anyway, and it lapses a minute and the lease time after that. Mutex.Inspect reads it (Info.Owner); a token
// that another client wrote has none. A Redis user not granted
// "{k}/lock:owner:*" goes without it: the call that carried it is sent
// again at once without it, and it is tried again a minute later, so it
// never fails a call.
//
// A queue of waiters, while there are some, lives in keys beside the
// lock's key, in its Redis Cluster hash slot, named for the package:
// "{k}/lock:q", "{k}/lock:qd" and "{k}/lock:qw" beside a key k without a
// hash tag, "{t}:x:lock:q" and so on beside a key "{t}:x"; it lapses by
// itself. No other package of the module reads or writes them, and a
// package that meets the lock's string at its own key refuses it with
// WRONGTYPE and writes nothing.
//
// Errors match ErrInvalidConfig (a nil client or a Config New cannot
// work with; a Mutex not made by New, a Lock not made by TryLock or Lock), ErrInvalidArgument (a nil context,
// an empty token; nothing was sent), ErrNotObtained (TryLock's refusal),
// ErrNotHeld (the lock is no longer this owner's), ErrNotReplicated, or
// ErrOutcomeUnknown: the call was sent and no answer came back, so it may
// or may not have taken effect. Call again with the same arguments then.
//
// Every write takes effect once, however often it is sent. go-redis sends
// a call again when its reply was lost (MaxRetries, 3 by default), so each
// call carries the owner's token, made before the first send, and a call
// sent again finds its first run's effect and answers as it did: TryLock
// and Lock find the lock held by their own token and return the Lock; a
// waiter's try keeps its one place in the queue; Refresh and a handed
// lock's claim find the lock held and answer so again. What frees the
// lock leaves no token behind, so Unlock, and Break, pass the lease
// deadline the server gave the owner: a call that finds the lock gone
// before that deadline was run already, and answers as its first run did
// (see Lock.Unlock for the narrow edges). Errors name the method that
// failed and the key, as `lock: refresh "k": not held`.
package lock
