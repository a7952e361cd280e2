-- obtain_queued: take the lock for a waiting owner if no one holds it;
-- otherwise join the waiting queue, or keep the owner's place in it, so
-- that an unlock can hand the lock straight to it (see hand_off.lua).
--
-- KEYS[1]  the lock: a string holding the owner's token, with a PX expiry
--          (redislock's and redsync's data too), marked ('+' after the
--          token) once someone waits (see unlock.lua)
-- KEYS[2]  queue: sorted set, waiting token -> arrival number
-- KEYS[3]  queue deadlines: sorted set, waiting token -> when its entry lapses (ms)
-- KEYS[4]  queue wants: hash, waiting token -> '1:lease ms'; '' -> last arrival number
-- ARGV[1]  the owner's token
-- ARGV[2]  lease time, ms
-- ARGV[3]  queue entry lease, ms: a waiter that stops trying leaves the queue then
-- KEYS[5]  optional: the owner record of the caller's Mutex (see owner.go),
--          set to ARGV[4] with an expiry of ARGV[5] ms before anything else
--
-- Returns {1, fence, now ms} when the owner holds the lock now, its lease
-- the lease time from now: it took it, or found it handed to it by an
-- unlock whose notice it missed, or found it taken by its own first run,
-- when this call is sent again. The fence is the server's clock in µs as
-- it was taken (see obtain.go). Otherwise it returns {0, ms until the
-- holder's lease lapses (0 when the holder's key has no expiry), arrival
-- number, now ms}, the arrival number naming the waiter's queue entry,
-- which an unlock's notice names too; a call sent again keeps the same
-- entry. now is the server's clock, which the waiter checks notices
-- against. SET ... GET fails a key of another type with WRONGTYPE and
-- leaves it as it was.
--
-- The mark: a waiter that queues behind an owner of this package, whose
-- token is 26 characters of base32 (A-Z, 2-7) as Lock.Token makes them,
-- puts '+' after it (SET ... KEEPTTL, which keeps the owner's lease as it
-- is), so that the owner's unlock checks the queue (see
-- unlock.lua); another client's token (redislock's, redsync's, a classic
-- script's) is never changed, since its own unlock compares it whole. An
-- owner that takes the lock here while others are still queued marks its
-- own token; one handed the lock was marked by the hand-off if others
-- wait.

local lock, queue, qdeadlines, qwants = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, ttl, qttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
if KEYS[5] then
	redis.call('SET', KEYS[5], ARGV[4], 'PX', ARGV[5])
end

local held = redis.call('SET', lock, token, 'NX', 'GET', 'PX', ttl)
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local marked = held == token .. '+'
if held == token or marked then
	-- Handed to this waiter, or taken by this call's first run: it holds
	-- the lock for its lease time from now.
	redis.call('PEXPIRE', lock, ttl)
	held = false
end
-- With no queue, the caller holds the lock with no entry to leave
-- (join_queue puts an entry in the queue and the other two keys, and
-- leave_queue and prune_queue take it out of all three) and no one
-- waiting behind it: it returns before the queue's helpers are defined.
if not held and redis.call('EXISTS', queue) == 0 then
	return {1, t[1] * 1000000 + t[2], now}
end

-- #include queue.lua

if not held then
	leave_queue(queue, qdeadlines, qwants, token)
	if not marked and redis.call('EXISTS', queue) == 1 then
		redis.call('SET', lock, token .. '+', 'KEEPTTL')
	end
	return {1, t[1] * 1000000 + t[2], now}
end

if #held == 26 and not string.find(held, '[^A-Z2-7]') then
	redis.call('SET', lock, held .. '+', 'KEEPTTL')
end
prune_queue(queue, qdeadlines, qwants, now)
local arrival = join_queue(queue, qdeadlines, qwants, token, '1:' .. ttl, now, qttl)
return {0, math.max(redis.call('PTTL', lock), 0), arrival, now}
