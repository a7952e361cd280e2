-- count: the units held by live leases. Writes nothing.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
--
-- Returns {1, the units in use}.

-- #include lib.lua

local leases, weights = KEYS[1], KEYS[2]
local now = now_ms()
local extra = extra_units(weights)
if extra == 0 then
	return {1, redis.call('ZCOUNT', leases, '(' .. now, '+inf')}
end
local units = 0
for _, holder in ipairs(redis.call('ZRANGEBYSCORE', leases, '(' .. now, '+inf')) do
	units = units + weight_of(weights, extra, holder)
end
return {1, units}
