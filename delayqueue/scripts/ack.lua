-- ack: remove a delivered message for good, if its delivery still holds
-- its lease.
--
-- KEYS     the queue's seven keys (see lib.lua)
-- ARGV[1]  the message's id
-- ARGV[2]  the delivery's token
-- ARGV[3]  the lease deadline Poll gave the delivery (ms, server clock)
--
-- Returns {1} when the message was removed, and {1} again for an ack sent
-- again after its first run removed it: only this delivery's holder could
-- have ended a lease whose deadline has not passed, and the message is
-- gone, so that holder acked it. Else {0}: the lease lapsed (the message is
-- due again, or was delivered again), or the delivery was given back. A
-- queue left without messages leaves no keys.

-- #include lib.lua

local err = check_types()
if err then
	return err
end
local id, token = ARGV[1], ARGV[2]
local now = now_ms()
if not held(id, token, now) then
	if tonumber(ARGV[3]) > now and not redis.call('HGET', attempts, id) then
		return {1}
	end
	return {0}
end
redis.call('ZREM', leases, token)
redis.call('HDEL', bodies, id)
redis.call('HDEL', attempts, id, token)
drop_if_empty()
return {1}
