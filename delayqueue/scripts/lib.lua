-- lib: helpers for the delay queue's scripts, included where a script has
-- its "-- #include lib.lua" line.
--
-- Every script takes the queue's seven keys, in one Redis Cluster hash slot:
--   KEYS[1]  queue     sorted set, entry -> due time (ms, server clock); an
--                      entry is an order key and the message's id (see
--                      entry), so equal times come out in push order
--   KEYS[2]  leases    sorted set, delivery token -> lease deadline (ms),
--                      one per message in flight
--   KEYS[3]  bodies    hash, id -> payload
--   KEYS[4]  attempts  hash, id -> deliveries so far (absent until the
--                      first; 0 once requeued), and delivery token ->
--                      'due id' for each message in flight
--   KEYS[5]  dead      sorted set, id -> when it was dead-lettered (ms)
--   KEYS[6]  waiters   sorted set, consumer -> when its registration lapses
--                      (ms); the key lapses with its last registration
--   KEYS[7]  info      hash: 'ms' and 'seq' (the last push's order key),
--                      'armed' and 'keeper' (the next event, and the
--                      waiter timed to it)
-- Every script's reply is a table whose first element is a status: 1 when
-- it did what it was asked, 0 when the delivery it names no longer holds
-- its lease (ack, nack, extend), 2 when nothing is due (poll).
--
-- A message's id is minted by its pusher, and a delivery's token by its
-- poller, each before the first send, so a call sent again finds what its
-- first run wrote. A token is in leases exactly when it is in attempts:
-- every script that removes the one removes the other. info is deleted
-- when queue, leases and dead are all empty, and the hashes empty
-- themselves, so an empty queue leaves no key but waiters.

local queue, leases, bodies, attempts, dead, waiters, info = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local kinds = {'zset', 'zset', 'hash', 'hash', 'zset', 'zset', 'hash'}

-- check_types returns an error reply, before the script writes anything,
-- when a key holds another type, so that such a key is left as it was.
local function check_types()
	for i, kind in ipairs(kinds) do
		local t = redis.call('TYPE', KEYS[i])
		t = t.ok or t
		if t ~= 'none' and t ~= kind then
			return redis.error_reply('WRONGTYPE ' .. KEYS[i] .. ' holds a ' .. t .. ', not a ' .. kind)
		end
	end
end

-- now_ms is the server's clock in ms.
local function now_ms()
	local t = redis.call('TIME')
	return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- entry is the queue's member for id: an order key, the 13-digit ms and
-- 6-digit sequence number of its push (0 for a message given back or
-- requeued), then a space and id.
local function entry(ms, seq, id)
	return string.format('%013d-%06d %s', ms, seq, id)
end

-- entry_id is the id in a queue entry.
local function entry_id(e)
	return string.sub(e, 22)
end

-- delivery returns the due time and id of the delivery token names, or
-- nil when it names no message in flight.
local function delivery(token)
	local v = redis.call('HGET', attempts, token)
	if not v then
		return nil
	end
	local due, id = string.match(v, '^(%d+) (.*)$')
	return tonumber(due), id
end

-- held reports whether the delivery token names is of id and still holds
-- its lease.
local function held(id, token, now)
	local deadline = tonumber(redis.call('ZSCORE', leases, token))
	if deadline == nil or deadline <= now then
		return false
	end
	local _, mine = delivery(token)
	return mine == id
end

-- next_event is the earliest due time or lease deadline, nil when none.
local function next_event()
	local q = redis.call('ZRANGE', queue, 0, 0, 'WITHSCORES')[2]
	local l = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')[2]
	if q and l then
		return math.min(tonumber(q), tonumber(l))
	end
	return tonumber(q or l)
end

-- wake_one takes the first live waiter off the waiters and wakes it with
-- a notice naming it. notify is 'command channel'.
local function wake_one(now, notify)
	redis.call('ZREMRANGEBYSCORE', waiters, '-inf', now)
	local first = redis.call('ZRANGE', waiters, 0, 0)[1]
	if not first then
		return
	end
	redis.call('ZREM', waiters, first)
	local command, channel = string.match(notify, '^(%a+) (.*)$')
	redis.call(command, channel, first)
end

-- schedule wakes one waiter for a message just queued due at due, when no
-- live keeper is timed to wake before it: a due message wakes one waiter
-- to take it; a later one wakes one to time itself to it.
local function schedule(due, now, notify)
	if due > now then
		local armed = tonumber(redis.call('HGET', info, 'armed'))
		local keeper = redis.call('HGET', info, 'keeper')
		if armed and armed > now and armed <= due and tonumber(redis.call('ZSCORE', waiters, keeper) or 0) > now then
			return
		end
		redis.call('HDEL', info, 'armed', 'keeper')
	end
	wake_one(now, notify)
end

-- drop_if_empty deletes info once the queue holds no message at all.
local function drop_if_empty()
	if redis.call('EXISTS', queue, leases, dead) == 0 then
		redis.call('DEL', info)
	end
end
