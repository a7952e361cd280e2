-- grab: give user the next share of a packet, once: a user who holds a
-- claim gets it back, and no share is taken twice or beyond the count.
--
-- KEYS[1]  packet (see lib.lua)
-- KEYS[2]  shares
-- KEYS[3]  log
-- ARGV[1]  packet id
-- ARGV[2]  user
--
-- Returns {1, claim}, the user's claim "amount:seq:at" (at in ms, server
-- clock), taken now or before; or, with nothing written, {0} no such
-- packet, {-1} sold out (even once expired), {-2} expired with shares
-- left.

-- #include lib.lua

local packet, shares, log = KEYS[1], KEYS[2], KEYS[3]
local id, user = ARGV[1], ARGV[2]
local field = 'u:' .. user

local f = redis.call('HMGET', packet, field, 'count', 'left', 'expires', 'expired')
if f[1] then
	return {1, f[1]}
end
if not f[2] then
	return {0}
end
if f[3] == '0' then
	return {-1}
end
local now = now_ms()
-- Once expired, always: a server whose clock runs behind the one that
-- expired the packet (a promoted replica) must not pay out its refund.
if f[5] or now >= tonumber(f[4]) then
	return {-2}
end
local amount = redis.call('LPOP', shares)
if not amount then
	return {-1}
end
-- The share taken was the (count - left + 1)th, and left drops by one.
local left = tonumber(f[3]) - 1
local seq = tonumber(f[2]) - left
local claim = amount .. ':' .. seq .. ':' .. now
redis.call('HSET', packet, field, claim, 'left', left)
redis.call('HINCRBY', packet, 'left_amount', -tonumber(amount))
redis.call('XADD', log, '*', 'k', 'c', 'id', id, 'u', user, 'a', amount, 's', seq, 't', now)
return {1, claim}
