// Package classic holds, verbatim, the Lua scripts that the benchmarks
// run as baselines without the library: the scripts a team commonly
// writes for each primitive (the classic scripts), and the bare lock's
// compare-and-delete. Every command that runs one takes it from here, so
// that each report measures the same text.
package classic

// CounterAcquire and CounterRelease are the classic concurrency-limit
// scripts: a plain counter at KEYS[1], ARGV[1] the limit. The acquire
// reads the count and, below the limit, increments it and sets a 300 s
// expiry; it returns the count. The release decrements a positive count.
const (
	CounterAcquire = "local count = redis.call('get',KEYS[1]);if not count or tonumber(count) < tonumber(ARGV[1]) then count=redis.call('incr',KEYS[1]);redis.call('EXPIRE', KEYS[1], 300);end;return tonumber(count)"
	CounterRelease = "local count = redis.call('get',KEYS[1]);if count and tonumber(count)>0 then count=redis.call('incrby',KEYS[1],-1);end;return tonumber(count)"
)

// CompareAndDelete is the bare lock's unlock: delete the key if it still
// holds the owner's token. KEYS[1] the lock, ARGV[1] the token.
const CompareAndDelete = "if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end"

// Lock and Unlock are the classic lock scripts. Lock: KEYS[1] the lock,
// ARGV[1] the lease in ms, ARGV[2] the token; SETNX, then PEXPIRE when it
// set the key; it returns 1 when it took the lock. Unlock: KEYS[1] the
// lock, ARGV[1] the token; a compare-and-delete.
const (
	Lock   = "local lock_key = KEYS[1]\nlocal lock_timeout = tonumber(ARGV[1])\nlocal unique_value = ARGV[2]\n\nlocal locked = redis.call('setnx', lock_key, unique_value)\nif locked == 1 then\nredis.call('pexpire', lock_key, lock_timeout)\nend\n\nreturn locked\n"
	Unlock = "local lock_key = KEYS[1]\nlocal unique_value = ARGV[1]\n\nif redis.call('get', lock_key) == unique_value then\nreturn redis.call('del', lock_key)\nelse\nreturn 0\nend\n"
)

// FixedWindow is the classic fixed-window rate-limit script: INCR; refuse
// (return the count) above ARGV[1]; on the first hit, EXPIRE the key
// ARGV[2] seconds. KEYS[1] the counter. It counts the calls it refuses.
const FixedWindow = "local c; c = redis.call('incr', KEYS[1]); if c and tonumber(c) > tonumber(ARGV[1]) then return c; end; if tonumber(c) == 1 then redis.call('expire', KEYS[1], ARGV[2]) end; return c;"

// RecentAdd is the classic recent-list script, as its Java string
// concatenation makes it: ZADD the member at the score, ZCARD, and
// ZREMRANGEBYRANK the oldest above the max. KEYS[1] the list; ARGV[1] the
// member, ARGV[2] the score (the client's clock in whole seconds), ARGV[3]
// the max.
const RecentAdd = "local key = KEYS[1] " +
	"local member = ARGV[1] " +
	"local score = ARGV[2] " +
	"local maxSize = tonumber(ARGV[3]) " +
	"redis.call('ZADD', key, score, member) " +
	"local size = redis.call('ZCARD', key) " +
	"if size > maxSize then " +
	"    redis.call('ZREMRANGEBYRANK', key, 0, size - maxSize - 1) " +
	"end " +
	"return 1"

// Grab is the classic red-packet grab script, line by line, its trailing
// spaces kept. It makes its key names from KEYS[1], the packet id:
// red_packet_<id>, a hash whose field stock counts the shares left, and
// red_packet_list_<id>, a list to which it pushes ARGV[1],
// "userId-timeMillis". It returns 1 for a share taken, 2 for the last one,
// and 0 when the packet is sold out.
const Grab = "local listKey = 'red_packet_list_'..KEYS[1]  \n" +
	"local redPacket = 'red_packet_'..KEYS[1] \n" +
	"local stock = tonumber(redis.call('hget', redPacket, 'stock')) \n" +
	"if stock <= 0 then \n" +
	"  return 0 \n" +
	"end \n" +
	"stock = stock-1\n" +
	"redis.call('hset', redPacket, 'stock', tostring(stock)) \n" +
	"redis.call('rpush', listKey, ARGV[1])  \n" +
	"if stock == 0 then \n" +
	"  return 2 \n" +
	"end  \n" +
	"return 1"

// DelayPoll is the classic delay-queue poll script: it reads the head of
// the sorted set and removes it when its score is at most ARGV[1], the
// caller's time in seconds. KEYS[1] the sorted set. It replies the member
// taken, or nil.
const DelayPoll = "local entry = redis.call('zrange', KEYS[1], 0, 0, 'WITHSCORES')\nif entry then\nif entry[2] and tonumber(entry[2]) <= tonumber(ARGV[1]) then\nredis.call('zrem', KEYS[1], entry[1])\nreturn entry[1]\nend\nend\nreturn nil;\n"
