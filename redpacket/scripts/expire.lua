-- expire: once a packet's ttl has passed, take its unclaimed shares off
-- it and log them, so that they can be refunded; once only.
--
-- KEYS[1]  packet (see lib.lua)
-- KEYS[2]  log
-- KEYS[3]  due
-- ARGV[1]  packet id
--
-- Returns {0, shares, amount, at} once the packet is expired, with the
-- unclaimed shares, their sum, and at the time it was expired (ms, server
-- clock); {1, ms} when the packet expires in ms; {2} when the packet is
-- gone. Every case but the second takes the id off due.
--
-- Once only: the run that expires the packet marks it expired and logs
-- it; a later run, such as this one sent again after its reply was lost,
-- finds the mark, writes nothing to the packet or the log, and answers as
-- that run did, from the packet's fields, which no grab changes once it
-- has expired. The packet's fields stay: Remaining still reports the
-- unclaimed shares.

-- #include lib.lua

local packet, log, due = KEYS[1], KEYS[2], KEYS[3]
local id = ARGV[1]

local f = redis.call('HMGET', packet, 'expires', 'expired', 'left', 'left_amount',
	'total', 'count', 'split', 'created')
if not f[1] then
	redis.call('ZREM', due, id)
	return {2}
end
if f[2] then
	redis.call('ZREM', due, id)
	return {0, tonumber(f[3]), tonumber(f[4]), tonumber(f[2])}
end
local now = now_ms()
if now < tonumber(f[1]) then
	return {1, tonumber(f[1]) - now}
end
-- Grab refuses from expires on, so left and left_amount are final: the
-- shares stay, untaken, until the keys lapse.
redis.call('HSET', packet, 'expired', now)
redis.call('ZREM', due, id)
redis.call('XADD', log, '*', 'k', 'x', 'id', id, 'total', f[5], 'count', f[6],
	'split', f[7], 'created', f[8], 'expires', f[1], 'expired', now,
	'left', f[3], 'left_amount', f[4])
return {0, tonumber(f[3]), tonumber(f[4]), now}
