-- give: giving messages back, and the checks of the rare paths; included
-- after lib.lua, where a script has its "-- #include give.lua" line.

-- check_types returns an error reply when a key holds another type.
local function check_types()
	local kinds = {'zset', 'zset', 'hash', 'hash', 'zset', 'zset', 'hash', 'hash'}
	for i, kind in ipairs(kinds) do
		local t = redis.call('TYPE', KEYS[i])
		t = t.ok or t
		if t ~= 'none' and t ~= kind then
			return redis.error_reply('WRONGTYPE ' .. KEYS[i] .. ' holds a ' .. t .. ', not a ' .. kind)
		end
	end
end

-- given is the order key of a message given back or requeued: '0', before
-- any push's (see push.lua), so it comes before the pushes due at the
-- same ms.
local given = '0'

-- entry is the queue's member for id given back with n deliveries so far.
local function entry(id, n)
	if n > 0 then
		return given .. ' ' .. id .. ' ' .. n
	end
	return given .. ' ' .. id
end

-- requeued is the entry of a message requeued from the dead letters: its
-- deliveries so far 0, written out, which no other entry is.
local function requeued(id)
	return given .. ' ' .. id .. ' 0'
end

-- delivery returns the due time, attempt and id of the delivery token
-- names, or nil when it names no message in flight.
local function delivery(token)
	local v = redis.call('HGET', bodies, token)
	if not v then
		return nil
	end
	local due, attempt, id = string.match(v, '^(%d+) (%d+) (.*)$')
	return tonumber(due), tonumber(attempt), id
end

-- lapse gives back, or dead-letters, the messages of the leases that
-- lapsed by now (up to 100), due when they lapsed, with their deliveries
-- so far. It returns an error reply when a key holds another type.
local function lapse(now, max)
	local err = check_types()
	if err then
		return err
	end
	local lapsed = redis.call('ZRANGEBYSCORE', leases, '-inf', now, 'WITHSCORES', 'LIMIT', 0, 100)
	for i = 1, #lapsed, 2 do
		local token, id = string.match(lapsed[i], '^(%S+) (.*)$')
		local _, attempt = delivery(token)
		redis.call('ZREM', leases, lapsed[i])
		redis.call('HDEL', bodies, token)
		if attempt then
			if attempt >= max then
				redis.call('ZADD', dead, now, id)
				redis.call('HSET', attempts, id, attempt)
			else
				redis.call('ZADD', queue, lapsed[i + 1], entry(id, attempt))
			end
		end
	end
	local earliest = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')[2]
	if earliest then
		redis.call('HSET', bodies, '#lease', earliest)
	else
		redis.call('HDEL', bodies, '#lease')
	end
end

-- drop_if_empty deletes info, and bodies' '#lease', once the queue holds
-- no message at all.
local function drop_if_empty()
	if redis.call('EXISTS', queue, leases, dead) == 0 then
		redis.call('DEL', info)
		redis.call('HDEL', bodies, '#lease')
	end
end
