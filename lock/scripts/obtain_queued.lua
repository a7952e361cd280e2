-- obtain_queued: take the lock for a waiting owner if no one holds it;
-- otherwise join the waiting queue, or keep the owner's place in it, so
-- that an unlock can hand the lock straight to it (see unlock.lua).
--
-- KEYS[1]  the lock: a string holding the owner's token, with a PX expiry
-- KEYS[2]  the last fence issued: see fence.lua
-- KEYS[3]  queue: sorted set, waiting token -> arrival number
-- KEYS[4]  queue deadlines: sorted set, waiting token -> when its entry lapses (ms)
-- KEYS[5]  queue wants: hash, waiting token -> '1:lease ms'; '' -> last arrival number
-- ARGV[1]  the owner's token
-- ARGV[2]  lease time, ms
-- ARGV[3]  queue entry lease, ms: a waiter that stops trying leaves the queue then
--
-- Returns {fence, arrival}: as obtain.lua returns, and the arrival number
-- that names the waiter's queue entry, 0 when it took the lock (and left
-- the queue). An unlock's notice names the entry too.

-- #include fence.lua
-- #include queue.lua

local lock, fence, queue, qdeadlines, qwants = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local token, ttl, qttl = ARGV[1], ARGV[2], tonumber(ARGV[3])

if not redis.call('SET', lock, token, 'NX', 'GET', 'PX', ttl) then
	leave_queue(queue, qdeadlines, qwants, token)
	return {next_fence(fence, ttl), 0}
end

local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
prune_queue(queue, qdeadlines, qwants, now)
local arrival = join_queue(queue, qdeadlines, qwants, token, '1:' .. ttl, now, qttl)
return {-math.max(redis.call('PTTL', lock), 0), arrival}
