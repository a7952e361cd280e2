-- holders: list the live leases, earliest deadline first. Writes nothing.
--
-- KEYS[1]  the lease set: a sorted set of holder -> lease deadline (ms, server time)
--
-- Returns a flat array {holder, deadline ms, holder, deadline ms, ...}.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')
