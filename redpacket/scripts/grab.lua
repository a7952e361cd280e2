-- grab: give user the next share of a packet, once: a user who holds a
-- claim gets it back, and no share is taken twice or beyond the count.
--
-- KEYS[1]  packet (see lib.lua)
-- KEYS[2]  shares
-- KEYS[3]  log
-- ARGV[1]  packet id
-- ARGV[2]  user
--
-- Returns the user's claim "amount:seq:at" (at in ms, server clock), a
-- string, taken now or before; or, with nothing written, an integer
-- status: 0 no such packet, -1 sold out (even once expired), -2 expired
-- with shares left. The reply is bare, not a table, since a table costs
-- the server more than the rest of the reply; a claim is never an
-- integer, so the two cannot be confused.
--
-- Once: the claim is the user's field of the packet, read first, so a
-- second run (a re-send whose first reply was lost, or a second Grab)
-- returns it and writes nothing. Every number written is printed as an
-- integer: left and left_amount only fall, from count and total, which
-- Create bounded at 2^53-1, exact in Lua's numbers.
--
-- The common path runs five commands: HMGET, TIME, LPOP, XADD, HSET. The
-- claim is built once, and is both the user's field and the log entry's
-- one value beside the packet and the user (see lib.lua); left_amount is
-- the value read less the amount, written in the same HSET as the claim
-- and left.

local packet, shares, log = KEYS[1], KEYS[2], KEYS[3]
local user = ARGV[2]
local field = 'u:' .. user

local f = redis.call('HMGET', packet, field, 'count', 'left', 'expires', 'expired', 'left_amount')
if f[1] then
	return f[1]
end
if not f[2] then
	return 0
end
if f[3] == '0' then
	return -1
end
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
-- Once expired, always: a server whose clock runs behind the one that
-- expired the packet (a promoted replica) must not pay out its refund.
if f[5] or now >= tonumber(f[4]) then
	return -2
end
local amount = redis.call('LPOP', shares)
if not amount then
	return -1
end
-- The share taken was the (count - left + 1)th, and left drops by one.
local left = f[3] - 1
local claim = amount .. string.format(':%d:%d', f[2] - left, now)
redis.call('XADD', log, '*', 'id', ARGV[1], 'u', user, 'c', claim)
redis.call('HSET', packet, field, claim, 'left', string.format('%d', left),
	'left_amount', string.format('%d', f[6] - amount))
return claim
