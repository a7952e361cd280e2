-- ack: remove a delivered message for good, if its delivery still holds
-- its lease.
--
-- KEYS     the queue's seven keys (see lib.lua)
-- ARGV[1]  the message's id
-- ARGV[2]  the delivery's attempt number
--
-- Returns 1 when the message was removed, else 0: its lease lapsed (it is
-- due again, or was delivered again), or it was acked already. A queue
-- left without messages leaves no keys.

-- #include lib.lua

local err = check_types()
if err then
	return err
end
local id, attempt = ARGV[1], ARGV[2]
if not held(id, attempt, now_ms()) then
	return 0
end
redis.call('ZREM', leases, id)
redis.call('HDEL', bodies, id)
redis.call('HDEL', attempts, id)
drop_if_empty()
return 1
