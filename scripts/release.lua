-- release: free a holder's slot.
--
-- KEYS[1]  the lease set: a sorted set of holder -> lease deadline (ms, server time)
-- ARGV[1]  holder ID
--
-- Returns 1 when the holder held a live lease, else 0. Releasing twice is harmless.

local key, holder = KEYS[1], ARGV[1]

local deadline = redis.call('ZSCORE', key, holder)
if not deadline then
	return 0
end
redis.call('ZREM', key, holder)

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if tonumber(deadline) <= now then
	return 0
end
return 1
