// Package baseline holds the scripts the benchmarks measure the library
// against, each verbatim: the minimal ZSET lease scripts, and the scripts
// a team commonly writes for each primitive (the classic scripts). The
// classic scripts that the library's own tests run too live in the
// library's internal/classic.
package baseline

import "github.com/slotlimit/slotlimit/internal/classic"

// The baselines run without the library.
const (
	// LeaseAcquire is the least a limiter of leases that lapse must run,
	// with the caller's clock. KEYS[1] the lease set; ARGV[1] now in ms,
	// ARGV[2] the lease in ms, ARGV[3] the limit, ARGV[4] the holder. It
	// prunes the leases that lapsed, counts the rest, and below the limit
	// adds the holder's lease and sets the key's expiry; it returns 1 when
	// it granted the lease, else 0.
	LeaseAcquire = "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])\n" +
		"if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end\n" +
		"redis.call('ZADD', KEYS[1], ARGV[1] + ARGV[2], ARGV[4])\n" +
		"redis.call('PEXPIRE', KEYS[1], ARGV[2])\n" +
		"return 1\n"
	// LeaseRelease: KEYS[1] the lease set, ARGV[1] the holder; it removes
	// the holder's lease.
	LeaseRelease = "return redis.call('ZREM', KEYS[1], ARGV[1])\n"

	// CompareAndDelete is the bare lock's unlock: delete the key if it
	// still holds the owner's token. KEYS[1] the lock, ARGV[1] the token.
	CompareAndDelete = "if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end"

	// ClassicWindow is the classic fixed-window rate-limit script: INCR;
	// refuse (return the count) above ARGV[1]; on the first hit, EXPIRE
	// the key ARGV[2] seconds. KEYS[1] the counter.
	ClassicWindow = "local c; c = redis.call('incr', KEYS[1]); if c and tonumber(c) > tonumber(ARGV[1]) then return c; end; if tonumber(c) == 1 then redis.call('expire', KEYS[1], ARGV[2]) end; return c;"

	// ClassicRecent is the classic recent-list script (classic.Recent).
	ClassicRecent = classic.Recent
	// ClassicGrab is the classic red-packet grab script (classic.Grab).
	ClassicGrab = classic.Grab
)
