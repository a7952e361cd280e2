-- count: the number of live leases. Writes nothing.
--
-- KEYS[1]  the lease set: a sorted set of holder -> lease deadline (ms, server time)
--
-- Returns the count.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
