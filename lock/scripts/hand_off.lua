-- hand_off: free the lock if the caller still holds it, and hand it
-- straight to the first live waiter in the queue; unlock.lua sends the
-- owner here when its token is marked (someone may wait), and a waiter
-- that gives up comes here to leave the queue and pass on what it may
-- have been handed meanwhile.
--
-- KEYS[1]  the lock: a string holding the owner's token, with a PX expiry,
--          marked ('+' after it) once someone waits (see unlock.lua)
-- KEYS[2]  queue: sorted set, waiting token -> arrival number
-- KEYS[3]  queue deadlines: sorted set, waiting token -> when its entry lapses (ms)
-- KEYS[4]  queue wants: hash, waiting token -> '1:lease ms'
-- ARGV[1]  the caller's token: an owner's, or a waiter's that gives up
-- ARGV[2]  'command claim channel': the notice command ('publish',
--          'spublish' or none), the claim time in ms (how long a handed
--          lock waits for its waiter's claim), and the notice channel
-- ARGV[3]  the caller's lease deadline (ms, the server's clock), as the
--          server's replies to its lock and refreshes prove it at least;
--          0 when it is not known, as for a waiter
--
-- Returns a status alone: 1 when the caller held the lock, else 0: a lock
-- that lapsed, or that another owner holds now (another client's, say), is
-- left as it is. A caller that does not hold the lock is taken out of the
-- queue, if it is in it. A call sent again after its first run handed the
-- lock on finds it gone before the caller's deadline, and answers 1 (see
-- gone.lua).
--
-- A waiter handed the lock holds it, with a new fence (the server's clock
-- in µs, as when a lock is taken: see obtain.go), for the claim time or
-- its lease time if shorter, and a notice
-- '*now ms:held until ms:deadline ms:fence:arrival number:token' tells its
-- process: there the waiter, if the notice comes
-- while the lock is still held for it, returns at once and claims the
-- lock (claim.lua) until the deadline, its full lease time from now. Only
-- that waiter wakes. A waiter that died while queued holds the lock for
-- the claim time at most. The waiter's token is stored marked when others
-- are still queued, so that its unlock hands the lock on in turn.

-- #include queue.lua

local lock, queue, qdeadlines, qwants = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token = ARGV[1]

local held = redis.call('GET', lock)
if held ~= token and held ~= token .. '+' then
	leave_queue(queue, qdeadlines, qwants, token)
-- #include gone.lua
	return gone(ARGV[3])
end

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
leave_queue(queue, qdeadlines, qwants, waiter)
local value = waiter
if redis.call('EXISTS', queue) == 1 then
	value = waiter .. '+'
end
redis.call('SET', lock, value, 'PX', hold)
if command ~= '' then
	local notice = string.format('*%d:%d:%d:%d:%d:', now, now + hold - 1, now + lease, t[1] * 1000000 + t[2], tonumber(arrival))
	redis.call(command, channel, notice .. waiter)
end
return 1
