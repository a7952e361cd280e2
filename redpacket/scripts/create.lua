-- create: store a packet and its shares, already split, in one step.
--
-- KEYS[1]  packet (see lib.lua)
-- KEYS[2]  shares
-- KEYS[3]  log
-- KEYS[4]  due
-- ARGV[1]  packet id
-- ARGV[2]  total; ARGV[3] count; ARGV[4] split (0 random, 1 equal)
-- ARGV[5]  ttl, ms; ARGV[6] linger, ms: the keys outlive the ttl by it
-- ARGV[7..] the count amounts, in the order they are taken, summing to total
--
-- Returns {created, expires} in ms on the server's clock, or 0, with
-- nothing written, when the packet exists already.

-- #include lib.lua

local packet, shares, log, due = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, total, count, split = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local ttl, linger = tonumber(ARGV[5]), tonumber(ARGV[6])

if redis.call('EXISTS', packet, shares) > 0 then
	return 0
end
local created = now_ms()
local expires = created + ttl
-- unpack is bounded by Lua's stack, so push in chunks.
for i = 7, #ARGV, 1000 do
	redis.call('RPUSH', shares, unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
redis.call('HSET', packet, 'total', total, 'count', count, 'split', split,
	'created', created, 'expires', expires, 'left', count, 'left_amount', total)
redis.call('PEXPIREAT', packet, expires + linger)
redis.call('PEXPIREAT', shares, expires + linger)
redis.call('ZADD', due, expires, id)
redis.call('XADD', log, '*', 'k', 'p', 'id', id, 'total', total, 'count', count,
	'split', split, 'created', created, 'expires', expires)
return {created, expires}
