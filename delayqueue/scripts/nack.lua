-- nack: give a delivered message back, due again after a delay, or to the
-- dead letters when it has had max attempts; only while its delivery
-- still holds its lease.
--
-- KEYS     the queue's seven keys (see lib.lua)
-- ARGV[1]  the message's id
-- ARGV[2]  the delivery's attempt number
-- ARGV[3]  delay, ms
-- ARGV[4]  max attempts
-- ARGV[5]  'command channel' for notices (see push.lua)
--
-- Returns 1 when the message was given back (or dead-lettered), else 0:
-- its lease lapsed, or it was acked or given back already.

-- #include lib.lua

local err = check_types()
if err then
	return err
end
local id, attempt, delay, max, notify = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local now = now_ms()
if not held(id, attempt, now) then
	return 0
end
redis.call('ZREM', leases, id)
if tonumber(attempt) >= max then
	redis.call('ZADD', dead, now, id)
	return 1
end
redis.call('ZADD', queue, now + delay, id)
schedule(now + delay, now, notify)
return 1
