-- create: store a packet and its shares, already split, in one step;
-- once, however often it is sent.
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
-- Returns {1, created, expires}, in ms on the server's clock, once the
-- packet is stored; or {0}, with nothing written, when another packet has
-- the id.
--
-- A packet is the same packet when its id, total, count, split and ttl
-- are; the amounts are not compared, since a Random packet sent again is
-- cut again. A run that finds the same packet stored (its own first run,
-- whose reply was lost and which was sent again, or an earlier Create of
-- the same packet) writes nothing and answers as that run did: its
-- created and expires are in the hash, and expires - created is its ttl.
-- So the common path pays nothing for it: only a run that finds the keys
-- reads the hash.

local packet, shares, log, due = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, total, count, split = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local ttl, linger = tonumber(ARGV[5]), tonumber(ARGV[6])

if redis.call('EXISTS', packet, shares) > 0 then
	local f = redis.call('HMGET', packet, 'total', 'count', 'split', 'created', 'expires')
	if f[1] == total and f[2] == count and f[3] == split and f[4] and f[5]
		and tonumber(f[5]) - tonumber(f[4]) == ttl then
		return {1, tonumber(f[4]), tonumber(f[5])}
	end
	return {0}
end

-- #include lib.lua

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
return {1, created, expires}
