-- renew: extend a live lease by the lease time, counted from now.
--
-- KEYS[1]  the lease set: a sorted set of holder -> lease deadline (ms, server time)
-- ARGV[1]  holder ID
-- ARGV[2]  lease time in ms
--
-- Returns the new deadline in ms, or 0 when the holder holds no live lease.
-- A lapsed lease is removed, never renewed: renewal does not re-acquire.

local key, holder, ttl = KEYS[1], ARGV[1], tonumber(ARGV[2])

local deadline = redis.call('ZSCORE', key, holder)
if not deadline then
	return 0
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if tonumber(deadline) <= now then
	redis.call('ZREM', key, holder)
	return 0
end

deadline = now + ttl
redis.call('ZADD', key, deadline, holder)
local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', key, last[2])
return deadline
