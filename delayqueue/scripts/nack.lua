-- nack: give a delivered message back, due again after a delay, or to the
-- dead letters when it has had max attempts; only while its delivery
-- still holds its lease.
--
-- KEYS     the queue's eight keys (see lib.lua)
-- ARGV[1]  the message's id
-- ARGV[2]  the delivery's token
-- ARGV[3]  the lease deadline Poll gave the delivery (ms, server clock)
-- ARGV[4]  delay, ms
-- ARGV[5]  max attempts
-- ARGV[6]  'command channel' for notices (see push.lua)
--
-- Returns {1} when the message was given back (or dead-lettered), and {1}
-- again for a nack sent again after its first run: only this delivery's
-- holder could have ended a lease whose deadline has not passed. Else {0}:
-- the lease lapsed, or the delivery was acked. The message goes back with
-- the deliveries its delivery counted, in its entry.

-- #include lib.lua
-- #include wake.lua
-- #include give.lua

local id, token, delay, max, notify = ARGV[1], ARGV[2], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local now = now_ms()
local lease = token .. ' ' .. id
local deadline = tonumber(redis.call('ZSCORE', leases, lease))
if deadline == nil or deadline <= now then
	if tonumber(ARGV[3]) > now then
		return {1}
	end
	return {0}
end
local err = check_types()
if err then
	return err
end
local _, attempt = delivery(token)
redis.call('ZREM', leases, lease)
redis.call('HDEL', bodies, token)
attempt = attempt or max
if attempt >= max then
	redis.call('ZADD', dead, now, id)
	redis.call('HSET', attempts, id, attempt)
	return {1}
end
redis.call('ZADD', queue, now + delay, entry(id, attempt))
schedule(now + delay, now, live_waiter(now), notify)
return {1}
