-- poll: move the first due message from the queue to in flight, with a
-- lease, for one delivery; or register the consumer as a waiter and tell
-- it how long to sleep.
--
-- KEYS     the queue's seven keys (see lib.lua)
-- ARGV[1]  the delivery's token, minted by one Poll before its first
--          send: its name as a waiter too
-- ARGV[2]  visibility: the lease time, ms
-- ARGV[3]  max attempts
-- ARGV[4]  registration time of a waiter, ms
-- ARGV[5]  refresh: the longest sleep, ms
-- ARGV[6]  'command channel' for notices (see push.lua)
--
-- First, leases that lapsed (up to 100) go back to the queue, due when
-- they lapsed, or to the dead letters once their message had max attempts.
-- Then, if the token names a delivery already, this call was sent again
-- after its first run made it: the reply is that delivery, as the first
-- run gave it. Otherwise, when the first message is due, it is taken:
-- removed from the queue, its attempts counted, its lease set to now plus
-- visibility under the token, and the reply is {1, id, payload, attempt,
-- due ms, lease deadline ms}. If another message is due too, one more waiter
-- is woken to take it; if the consumer was the keeper, one waiter is woken
-- to become the next.
--
-- Otherwise the reply is {2, ms to sleep}. The consumer is registered as a
-- waiter, so that a push can wake it. One waiter, the keeper, sleeps until
-- the next event (a due time or a lease deadline), at most refresh; the
-- others sleep refresh, so the next event wakes one consumer, not all.

-- #include lib.lua

local err = check_types()
if err then
	return err
end
local token, vis, max, reg, refresh, notify = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local now = now_ms()

local lapsed = redis.call('ZRANGEBYSCORE', leases, '-inf', now, 'WITHSCORES', 'LIMIT', 0, 100)
for i = 1, #lapsed, 2 do
	local _, id = delivery(lapsed[i])
	redis.call('ZREM', leases, lapsed[i])
	redis.call('HDEL', attempts, lapsed[i])
	if id then
		if tonumber(redis.call('HGET', attempts, id) or max) >= max then
			redis.call('ZADD', dead, now, id)
		else
			redis.call('ZADD', queue, lapsed[i + 1], entry(now, 0, id))
		end
	end
end

-- delivered is the reply for the delivery the token already names.
local function delivered(due, id)
	return {1, id, redis.call('HGET', bodies, id) or '', tonumber(redis.call('HGET', attempts, id) or 0), due,
		tonumber(redis.call('ZSCORE', leases, token) or 0)}
end

local keeper = redis.call('HGET', info, 'keeper')
local head = redis.call('ZRANGE', queue, 0, 0, 'WITHSCORES')
if head[1] and tonumber(head[2]) <= now then
	local e, due = head[1], tonumber(head[2])
	local id = entry_id(e)
	local known = redis.call('HMGET', attempts, token, id)
	if known[1] then
		return delivered(delivery(token))
	end
	local attempt = (tonumber(known[2]) or 0) + 1
	redis.call('ZREM', queue, e)
	redis.call('ZREM', waiters, token)
	redis.call('HSET', attempts, id, attempt, token, string.format('%d %s', due, id))
	local deadline = now + vis
	redis.call('ZADD', leases, deadline, token)
	local after = redis.call('ZRANGE', queue, 0, 0, 'WITHSCORES')[2]
	if keeper == token then
		redis.call('HDEL', info, 'armed', 'keeper')
	end
	if after and tonumber(after) <= now or keeper == token and next_event() then
		wake_one(now, notify)
	end
	return {1, id, redis.call('HGET', bodies, id) or '', attempt, due, deadline}
end
local due, id = delivery(token)
if id then
	return delivered(due, id)
end

redis.call('ZADD', waiters, now + reg, token)
redis.call('PEXPIRE', waiters, reg)
local event = next_event()
if not event then
	return {2, refresh}
end
local armed = tonumber(redis.call('HGET', info, 'armed'))
if keeper and keeper ~= token and armed and armed > now and armed <= event
	and tonumber(redis.call('ZSCORE', waiters, keeper) or 0) > now then
	return {2, refresh}
end
redis.call('HSET', info, 'armed', event, 'keeper', token)
return {2, math.max(math.min(event - now, refresh), 0)}
