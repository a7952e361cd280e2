-- wake: waking waiting consumers, for the scripts that make a message due
-- (push, poll, nack, leave, requeue); included after lib.lua, where a
-- script has its "-- #include wake.lua" line.

-- live_waiter is a waiter whose registration has not lapsed, or nil:
-- the one whose registration lapses last (the one that polled last),
-- since when it has lapsed, every one has. (Comparing its score as a number spares turning now into a
-- string for a score range.)
local function live_waiter(now)
	local w = redis.call('ZRANGE', waiters, -1, -1, 'WITHSCORES')
	if w[2] and w[2] + 0 > now then
		return w[1]
	end
end

-- wake takes waiter first, when not nil, off the waiters and wakes it
-- with a notice naming it. notify is 'command channel'.
local function wake(first, notify)
	if not first then
		return
	end
	redis.call('ZREM', waiters, first)
	local command, channel = string.match(notify, '^(%a+) (.*)$')
	redis.call(command, channel, first)
end

-- schedule wakes first, a live waiter (see live_waiter), for a message just queued
-- due at due, when no live keeper is timed to wake before it: a due
-- message wakes one waiter to take it; a later one wakes one to time
-- itself to it.
local function schedule(due, now, first, notify)
	if due > now then
		local armed, keeper = unpack(redis.call('HMGET', info, 'armed', 'keeper'))
		armed = tonumber(armed)
		if armed and armed > now and armed <= due and tonumber(redis.call('ZSCORE', waiters, keeper) or 0) > now then
			return
		end
		redis.call('HDEL', info, 'armed', 'keeper')
	end
	wake(first, notify)
end
