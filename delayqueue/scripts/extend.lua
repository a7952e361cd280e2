-- extend: renew a delivered message's lease to visibility from now, if
-- its delivery still holds it.
--
-- KEYS     the queue's eight keys (see lib.lua)
-- ARGV[1]  the message's id
-- ARGV[2]  the delivery's token
-- ARGV[3]  visibility: the lease time, ms
--
-- Returns {1, the new lease deadline (ms)} when renewed, else {0}: a lapsed
-- lease is never renewed, as the message is due again. Sent again, it
-- renews the lease its first run renewed, to visibility from then. A
-- lease renewed to before bodies' '#lease' (a lease of a Queue with a
-- shorter Visibility) lowers '#lease' to it, which stays at most the
-- earliest deadline (see lib.lua). It reads leases and bodies before it
-- writes them, so a key of another type fails it with WRONGTYPE before
-- anything is written.

-- #include lib.lua

local id, token, vis = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now = now_ms()
local lease = token .. ' ' .. id
local deadline = tonumber(redis.call('ZSCORE', leases, lease))
if deadline == nil or deadline <= now then
	return {0}
end
local low = redis.call('HGET', bodies, '#lease')
redis.call('ZADD', leases, now + vis, lease)
if not low or now + vis < low + 0 then
	redis.call('HSET', bodies, '#lease', now + vis)
end
return {1, now + vis}
