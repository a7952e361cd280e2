-- counter_acquire: take one unit of a plain integer counter if it is below the limit.
-- The layout of the classic INCR limiter script: the key holds an integer, and a successful
-- acquire sets the whole key's expiry to the lease time.
--
-- KEYS[1]  the counter: a string holding an integer
-- ARGV[1]  limit
-- ARGV[2]  lease time in ms
--
-- Returns {acquired (0|1), count, ms}: when acquired, the key's new expiry time
-- (ms, server time); when refused, the key's remaining TTL in ms, -1 when it has none.
-- Unlike the classic script, a refusal is told apart from taking the last unit.

local key = KEYS[1]
local limit, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])

local value = redis.call('GET', key)
local count = tonumber(value or '0')
if not count then
	return redis.error_reply('ERR value is not an integer')
end
if count >= limit then
	return {0, count, redis.call('PTTL', key)}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
count = redis.call('INCR', key)
redis.call('PEXPIRE', key, ttl)
return {1, count, now + ttl}
