-- obtain_queued: take the lock for a waiting owner if no one holds it;
-- otherwise join the waiting queue, or keep the owner's place in it, so
-- that an unlock can hand the lock straight to it (see unlock.lua).
--
-- KEYS[1]  the lock: a string holding the owner's token, with a PX expiry
--          (the seed's data, and redislock's and redsync's)
-- KEYS[2]  queue: sorted set, waiting token -> arrival number
-- KEYS[3]  queue deadlines: sorted set, waiting token -> when its entry lapses (ms)
-- KEYS[4]  queue wants: hash, waiting token -> '1:lease ms'; '' -> last arrival number
-- ARGV[1]  the owner's token
-- ARGV[2]  lease time, ms
-- ARGV[3]  queue entry lease, ms: a waiter that stops trying leaves the queue then
--
-- Returns {fence, 0} when the lock was taken, or found handed to the
-- owner by an unlock whose notice it missed, the fence being the server's
-- clock in µs as it was taken (see obtain.go). Otherwise it returns
-- {-(ms until the holder's lease lapses), or 0 when the holder's key has no
-- expiry, arrival number}, the arrival number naming the waiter's queue
-- entry, which an unlock's notice names too. SET ... GET fails a key of
-- another type with WRONGTYPE and leaves it as it was.

-- #include queue.lua

local lock, queue, qdeadlines, qwants = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, ttl, qttl = ARGV[1], ARGV[2], tonumber(ARGV[3])

local held = redis.call('SET', lock, token, 'NX', 'GET', 'PX', ttl)
local t = redis.call('TIME')
if held == token then
	-- An unlock handed the lock to this waiter, whose notice went astray:
	-- it holds the lock for the claim time, and takes it for its lease.
	redis.call('PEXPIRE', lock, ttl)
	held = false
end
if not held then
	leave_queue(queue, qdeadlines, qwants, token)
	return {t[1] * 1000000 + t[2], 0}
end

local now = t[1] * 1000 + math.floor(t[2] / 1000)
prune_queue(queue, qdeadlines, qwants, now)
local arrival = join_queue(queue, qdeadlines, qwants, token, '1:' .. ttl, now, qttl)
return {-math.max(redis.call('PTTL', lock), 0), arrival}
