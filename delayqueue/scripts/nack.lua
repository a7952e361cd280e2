-- nack: give a delivered message back, due again after a delay, or to the
-- dead letters when it has had max attempts; only while its delivery
-- still holds its lease.
--
-- KEYS     the queue's seven keys (see lib.lua)
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
-- the lease lapsed, or the delivery was acked.

-- #include lib.lua

local err = check_types()
if err then
	return err
end
local id, token, delay, max, notify = ARGV[1], ARGV[2], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local now = now_ms()
if not held(id, token, now) then
	if tonumber(ARGV[3]) > now then
		return {1}
	end
	return {0}
end
redis.call('ZREM', leases, token)
redis.call('HDEL', attempts, token)
if tonumber(redis.call('HGET', attempts, id) or max) >= max then
	redis.call('ZADD', dead, now, id)
	return {1}
end
redis.call('ZADD', queue, now + delay, entry(now, 0, id))
schedule(now + delay, now, notify)
return {1}
