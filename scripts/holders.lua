-- holders: list the live leases, earliest deadline first. Writes nothing.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
--
-- Returns a flat array {1, holder, deadline ms, weight, holder, deadline ms,
-- weight, ...}: the status 1, then a triple per live lease.

-- #include lib.lua

local leases, weights = KEYS[1], KEYS[2]
local now = now_ms()
local extra = extra_units(weights)
local live = redis.call('ZRANGEBYSCORE', leases, '(' .. now, '+inf', 'WITHSCORES')
local out = {1}
for i = 1, #live, 2 do
	out[#out + 1] = live[i]
	out[#out + 1] = live[i + 1]
	out[#out + 1] = string.format('%d', weight_of(weights, extra, live[i]))
end
return out
