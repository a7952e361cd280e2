-- poll: move the first due message from the queue to in flight, with a
-- lease, for one delivery; or register the consumer as a waiter and tell
-- it how long to sleep.
--
-- KEYS     the queue's eight keys (see lib.lua)
-- ARGV[1]  the delivery's token, minted by one Poll before its first
--          send: its name as a waiter too
-- ARGV[2]  visibility: the lease time, ms
-- ARGV[3]  max attempts
-- ARGV[4]  registration time of a waiter, ms
-- ARGV[5]  refresh: the longest sleep, ms
-- ARGV[6]  'command channel' for notices (see push.lua)
-- ARGV[7]  '1' when a call of this Poll has registered as a waiter
--          before, else '0'
--
-- First, when leases lapsed (bodies' '#lease', at most the earliest lease
-- deadline, has passed: see lib.lua), leases that lapsed (up to 100) go
-- back to the queue, due when they lapsed, or to the dead letters once
-- their message had max attempts. Then, if the token names a delivery
-- already, this call was sent again after its first run made it: the
-- reply is that delivery, as the first run gave it. Otherwise, when the
-- first message is due, it is taken: its entry removed from the queue, its
-- lease set to now plus visibility under 'token id', its delivery written
-- under the token (with '#lease' lowered to its deadline when that is
-- below it, or absent), and the reply is {1, id, payload, attempt, due
-- ms, lease deadline ms}, the attempt one more than the deliveries its
-- entry counts. A consumer that was a waiter (ARGV[7] '1'), or a call that
-- gave lapsed leases back, then takes the consumer off the waiters and,
-- if another message is due too, wakes one more waiter to take it; if the
-- consumer was the keeper, one waiter is woken to become the next. A
-- waiter woken for a due message so wakes the next, while the consumers
-- that are not waiting take messages without reading the waiters: every
-- message made due wakes a waiter (push, nack, requeue), or falls at an
-- event the keeper is timed to (a due time, a lease deadline).
--
-- Otherwise, for a call with ARGV[7] '0', the reply is {2, 0}, and
-- nothing is written: its Poll calls again at once, with '1', so a call
-- with '0' never registers, and one sent again after it took a message
-- cannot leave its consumer among the waiters. For a call with '1' the
-- reply is {2, ms to sleep}. The consumer is registered as a waiter, so
-- that a push can wake it. One waiter, the keeper, sleeps until the next
-- event (a due time or a lease deadline), at most refresh; the others
-- sleep refresh, so the next event wakes one consumer, not all.
--
-- Taking a message costs TIME, ZRANGE of the first entry, HMGET of the
-- token, '#lease' and the body, ZADD, ZREM and HSET; and, for a waiter,
-- the second entry too, ZRANGE of the waiter that registered last (see
-- live_waiter) and ZSCORE of the token when it is not that one. Every key
-- it writes but leases is read before its first write, which is to
-- leases, so a key of another type fails it with WRONGTYPE before
-- anything is written; when leases lapsed, check_types runs first.
-- give.lua, which only lapses need, is defined only then (its include
-- line, which starts its line, stands in that branch).

-- #include lib.lua
-- #include wake.lua

local token, notify, waiter = ARGV[1], ARGV[6], ARGV[7] == '1'
local now = now_ms()
local chain = waiter -- whether taking a message reads the waiters

-- look reads the first entry (and the second, for a waiter, which wakes
-- another when it is due too), and the token's delivery, '#lease' and,
-- when the first entry is due, its id, deliveries so far and body. It
-- returns an error reply for an entry of an earlier release's layout.
local head, due, id, n, known
local function look()
	head = redis.call('ZRANGE', queue, 0, chain and 1 or 0, 'WITHSCORES')
	if head[1] and head[2] + 0 <= now then
		-- A push's entry is its 14-digit order key, a space and the id;
		-- a given-back message's adds its deliveries so far.
		local e, c = head[1], string.byte(head[1])
		if c > 48 and c < 58 and string.byte(e, 15) == 32 then
			id, n = string.sub(e, 16), 0
		else
			id, n = string.match(e, '^%w+ (%S+) ?(%d*)$')
			if not id then
				return redis.error_reply('ERR delayqueue entry ' .. e .. ' is not of this release: drain the queue with the release that wrote it')
			end
			n = tonumber(n) or 0
		end
		due = head[2]
		known = redis.call('HMGET', bodies, token, '#lease', id)
	else
		due = nil
		known = redis.call('HMGET', bodies, token, '#lease')
	end
end

local err = look()
if err then
	return err
end
if known[2] and known[2] + 0 <= now then
-- #include give.lua
	chain = true
	err = lapse(now, tonumber(ARGV[3])) or look()
	if err then
		return err
	end
end

local rec = known[1]
if due and not rec then
	local first, was, keeper
	if chain then
		first = live_waiter(now)
		was = first == token or first and redis.call('ZSCORE', waiters, token)
		if was then
			keeper = redis.call('HGET', info, 'keeper')
		end
	end
	-- The first write is to leases, which nothing read: a leases of
	-- another type fails it, with nothing written.
	local attempt, deadline = n + 1, now + ARGV[2]
	redis.call('ZADD', leases, deadline, token .. ' ' .. id)
	redis.call('ZREM', queue, head[1])
	local rec = n == 0 and due .. ' 1 ' .. id or due .. ' ' .. attempt .. ' ' .. id
	if known[2] and known[2] + 0 <= deadline then
		redis.call('HSET', bodies, token, rec)
	else
		redis.call('HSET', bodies, token, rec, '#lease', deadline)
	end
	if was then
		redis.call('ZREM', waiters, token)
		if first == token then
			first = live_waiter(now)
		end
	end
	local more = chain and head[3] and head[4] + 0 <= now
	if keeper == token then
		redis.call('HDEL', info, 'armed', 'keeper')
		more = more or redis.call('EXISTS', queue, leases) > 0
	end
	if more then
		wake(first, notify)
	end
	return {1, id, known[3] or '', attempt, tonumber(due), deadline}
end
if rec then
	-- This call was sent again: its first run made the delivery rec.
	local due, attempt, id = string.match(rec, '^(%d+) (%d+) (.*)$')
	return {1, id, redis.call('HGET', bodies, id) or '', tonumber(attempt), tonumber(due),
		tonumber(redis.call('ZSCORE', leases, token .. ' ' .. id) or 0)}
end

if not waiter then
	return {2, 0}
end
local reg, refresh = tonumber(ARGV[4]), tonumber(ARGV[5])
local armed, keeper = unpack(redis.call('HMGET', info, 'armed', 'keeper'))
armed = tonumber(armed)
local lease = tonumber(redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')[2])
redis.call('ZREMRANGEBYSCORE', waiters, '-inf', now)
redis.call('ZADD', waiters, now + reg, token)
redis.call('PEXPIRE', waiters, reg)
local event = tonumber(head[2])
if lease then
	event = math.min(event or lease, lease)
end
if not event then
	return {2, refresh}
end
if keeper and keeper ~= token and armed and armed > now and armed <= event
	and tonumber(redis.call('ZSCORE', waiters, keeper) or 0) > now then
	return {2, refresh}
end
redis.call('HSET', info, 'armed', event, 'keeper', token)
return {2, math.max(math.min(event - now, refresh), 0)}
