-- hand_off: free the lock if the owner still holds it, and hand it straight
-- to the first live waiter in the queue; unlock.lua sends the owner here
-- when someone waits.
--
-- KEYS[1]  the lock: a string holding the owner's token, with a PX expiry
-- KEYS[2]  queue: sorted set, waiting token -> arrival number
-- KEYS[3]  queue deadlines: sorted set, waiting token -> when its entry lapses (ms)
-- KEYS[4]  queue wants: hash, waiting token -> '1:lease ms'
-- ARGV[1]  the owner's token
-- ARGV[2]  'command claim channel': the notice command ('publish',
--          'spublish' or none), the claim time in ms (how long a handed
--          lock waits for its waiter's claim), and the notice channel; read
--          only when someone waits
--
-- Returns 1 when the owner held the lock, else 0: a lock that lapsed, or
-- that another owner holds now (the seed's, say), is left as it is.
--
-- A waiter handed the lock holds it, with a new fence (the server's clock
-- in µs, as when a lock is taken: see obtain.go), for the claim time
-- (at most its lease time), and a notice
-- '+deadline ms:fence:arrival number:token' tells its process, where the
-- waiter returns at once and claims the lock (claim.lua) until the
-- deadline, its full lease time from now. Only that waiter wakes. A waiter
-- that died while queued holds the lock for the claim time at most.

local lock, queue, qdeadlines, qwants = KEYS[1], KEYS[2], KEYS[3], KEYS[4]

if redis.call('GET', lock) ~= ARGV[1] then
	return 0
end
-- #include queue.lua

local command, claim, channel = string.match(ARGV[2], '^(%a*) (%d+) (.*)$')
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
prune_queue(queue, qdeadlines, qwants, now)
local first = redis.call('ZRANGE', queue, 0, 0, 'WITHSCORES')
local waiter, arrival = first[1], first[2]
local _, lease = wanted(waiter and redis.call('HGET', qwants, waiter) or '')
if not lease then
	if waiter then
		-- An entry without its wants (evicted?) is dropped, not served.
		leave_queue(queue, qdeadlines, qwants, waiter)
	end
	redis.call('DEL', lock)
	return 1
end
local hold = math.min(lease, tonumber(claim))
redis.call('SET', lock, waiter, 'PX', hold)
leave_queue(queue, qdeadlines, qwants, waiter)
if command ~= '' then
	redis.call(command, channel, string.format('+%d:%d:%d:', now + lease, t[1] * 1000000 + t[2], tonumber(arrival)) .. waiter)
end
return 1
