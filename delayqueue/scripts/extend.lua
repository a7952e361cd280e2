-- extend: renew a delivered message's lease to visibility from now, if
-- its delivery still holds it.
--
-- KEYS     the queue's seven keys (see lib.lua)
-- ARGV[1]  the message's id
-- ARGV[2]  the delivery's token
-- ARGV[3]  visibility: the lease time, ms
--
-- Returns {1, the new lease deadline (ms)} when renewed, else {0}: a lapsed
-- lease is never renewed, as the message is due again. Sent again, it
-- renews the lease its first run renewed, to visibility from then.

-- #include lib.lua

local err = check_types()
if err then
	return err
end
local id, token, vis = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now = now_ms()
if not held(id, token, now) then
	return {0}
end
redis.call('ZADD', leases, now + vis, token)
return {1, now + vis}
