-- renew: extend a live lease to the lease time from now; a lease that runs
-- longer already (given by a Limiter with a longer lease time) is kept.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
-- KEYS[3]  full marker for the renewing Limiter's limit: see acquire.lua;
--          deleted, since it was set to lapse with the earliest lease
-- ARGV[1]  holder ID
-- ARGV[2]  lease time, ms
--
-- Returns {1, the new deadline in ms}, or {0} when the holder holds no
-- live lease.
-- A lapsed lease is never renewed: renewal does not re-acquire.

-- #include lib.lua

local leases, weights, holder, ttl = KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2])

local deadline = redis.call('ZSCORE', leases, holder)
if not deadline then
	return {0}
end
local now = now_ms()
if tonumber(deadline) <= now then
	return {0}
end

deadline = math.max(tonumber(deadline), now + ttl)
redis.call('ZADD', leases, deadline, holder)
expire_after(leases, string.format('%d', deadline), false)
-- The weights, if any, lapse with the leases.
redis.call('PEXPIREAT', weights, string.format('%d', deadline), 'GT')
redis.call('DEL', KEYS[3])
return {1, deadline}
