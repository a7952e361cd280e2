-- ack: remove a delivered message for good, if its delivery still holds
-- its lease.
--
-- KEYS     the queue's eight keys (see lib.lua)
-- ARGV[1]  the message's id
-- ARGV[2]  the delivery's token
-- ARGV[3]  the lease deadline Poll gave the delivery (ms, server clock)
--
-- Returns {1} when the message was removed, and {1} again for an ack sent
-- again after its first run removed it: only this delivery's holder could
-- have ended a lease whose deadline has not passed, and the message's body
-- is gone, so that holder acked it. Else {0}: the lease lapsed (the
-- message is due again, or was delivered again), or the delivery was
-- given back. A queue left without messages leaves no keys.
--
-- Its commands: TIME, ZSCORE of the lease 'token id', HDEL of the body
-- and the delivery, HDEL of its push token, ZREM of the lease, and EXISTS
-- of the queue's three sorted sets; once they are all gone, HDEL of
-- bodies' '#lease' and of info's fields. The ZSCORE fails on leases, and
-- the HDEL, the first write, on bodies, when either holds another type;
-- info and pushes of another type are left as they were.

-- #include lib.lua

local id, token = ARGV[1], ARGV[2]
local now = now_ms()
local lease = token .. ' ' .. id
local deadline = tonumber(redis.call('ZSCORE', leases, lease))
if deadline == nil or deadline <= now then
	if tonumber(ARGV[3]) > now and not redis.call('HGET', bodies, id) then
		return {1}
	end
	return {0}
end
redis.call('HDEL', bodies, id, token)
redis.pcall('HDEL', pushes, id)
redis.call('ZREM', leases, lease)
if redis.call('EXISTS', queue, leases, dead) == 0 then
	redis.call('HDEL', bodies, '#lease')
	redis.pcall('HDEL', info, 'seq', 'armed', 'keeper')
end
return {1}
