-- lib: helpers for the delay queue's scripts, included where a script has
-- its "-- #include lib.lua" line.
--
-- Every script takes the queue's seven keys, in one Redis Cluster hash slot:
--   KEYS[1]  queue     sorted set, entry -> due time (ms, server clock); an
--                      entry is an order key, the message's id and, once
--                      it was delivered, its deliveries so far (see entry),
--                      so equal times come out in push order
--   KEYS[2]  leases    sorted set, 'token id' -> lease deadline (ms), one
--                      per message in flight
--   KEYS[3]  bodies    hash, id -> payload, and delivery token -> 'due
--                      attempt id' for each message in flight
--   KEYS[4]  attempts  hash, id -> deliveries, for each dead letter
--   KEYS[5]  dead      sorted set, id -> when it was dead-lettered (ms)
--   KEYS[6]  waiters   sorted set, consumer -> when its registration lapses
--                      (ms); the key lapses with its last registration
--   KEYS[7]  info      hash: 'seq' (the last push's order number), 'armed'
--                      and 'keeper' (the next event, and the waiter timed
--                      to it)
-- Every script's reply is a table whose first element is a status: 1 when
-- it did what it was asked, 0 when the delivery it names no longer holds
-- its lease (ack, nack, extend), 2 when nothing is due (poll).
--
-- A message's id is minted by its pusher, and a delivery's token by its
-- poller, each before the first send, so a call sent again finds what its
-- first run wrote. A message in flight has its lease in leases and its
-- delivery under its token in bodies: every script that removes the one
-- removes the other. info's fields are deleted when queue, leases and dead
-- are all empty, and the hashes empty themselves, so an empty queue
-- leaves no key but waiters.
--
-- A key of another type fails a script with WRONGTYPE before it writes
-- anything, so that such a key, and every other, is left as it was: push,
-- poll, ack and extend order their commands so that each key they write
-- was read, or written first, before any other write, or undo what they
-- wrote (push); the other scripts run check_types before their first
-- write.

local queue, leases, bodies, attempts, dead, waiters, info = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]

-- check_types returns an error reply when a key holds another type.
local function check_types()
	local kinds = {'zset', 'zset', 'hash', 'hash', 'zset', 'zset', 'hash'}
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

-- given is the order key of a message given back or requeued: it comes
-- before the pushes due at the same ms. A push's is its order number, in
-- 16 digits (see push.lua).
local given = '0000000000000000'

-- entry is the queue's member for id under order key order, with its
-- deliveries so far n when n is above 0.
local function entry(order, id, n)
	if n > 0 then
		return order .. ' ' .. id .. ' ' .. n
	end
	return order .. ' ' .. id
end

-- requeued is the entry of a message requeued from the dead letters: its
-- deliveries so far 0, written out, which no other entry is.
local function requeued(id)
	return given .. ' ' .. id .. ' 0'
end

-- parse_entry returns the id in a queue entry and its deliveries so far.
local function parse_entry(e)
	local id, n = string.match(e, '^%d+ (%S+) ?(%d*)$')
	return id, tonumber(n) or 0
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
				redis.call('ZADD', queue, lapsed[i + 1], entry(given, id, attempt))
			end
		end
	end
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

-- first_waiter is the first waiter whose registration has not lapsed, or
-- nil.
local function first_waiter(now)
	return redis.call('ZRANGEBYSCORE', waiters, '(' .. now, '+inf', 'LIMIT', 0, 1)[1]
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

-- wake_one wakes the first live waiter.
local function wake_one(now, notify)
	wake(first_waiter(now), notify)
end

-- schedule wakes first, the first live waiter, for a message just queued
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

-- drop_if_empty deletes info's fields once the queue holds no message at
-- all. A key of another type at info is left as it was.
local function drop_if_empty()
	if redis.call('EXISTS', queue, leases, dead) == 0 then
		redis.pcall('HDEL', info, 'seq', 'armed', 'keeper')
	end
end
