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
// It grew from a design note (seed 001) that guards a counter with a lock:
// SETNX and PEXPIRE with a unique value, a compare-and-delete unlock, and
// an INCR in between. It keeps that note's data, so the note's scripts,
// redislock and redsync interoperate with it on one key, and fixes its
// flaws:
//
//   - The note's combined script calls redis.call('eval', ...), which Redis
//     refuses inside a script. Here every operation is one script of its
//     own (scripts/), and none calls another.
//   - INCR is atomic already, so a lock adds nothing to a counter. Use INCR,
//     or slotlimit.Counter for a counter with a limit; take a lock for work
//     that one process at a time must do.
//   - A lock that is not obtained silently dropped the increment. Here
//     TryLock returns ErrNotObtained, and Lock waits for the lock.
//   - Nothing renewed a lock whose work outlasted its TTL. KeepAlive renews
//     it, and its context ends, with cause ErrNotHeld, if the lock is lost.
//   - Nothing stopped an owner that paused past its TTL from writing after
//     a new owner took the lock. Every owner gets a fence, a number that
//     grows with every owner (see Lock.Fence), for storage to refuse the
//     writes of an owner that no longer holds the lock.
//
// The key holds the owner's token as a plain string with a PX expiry. A
// queue of waiters, while there are some, lives in keys beside it in its
// Redis Cluster hash slot, and lapses by itself.
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
// (see Lock.Unlock for the narrow edges). Errors name the operation that
// failed and the key, as `lock: refresh "k": not held`.
package lock
