-- acquire: take a slot for a holder, or refresh the lease it already holds.
--
-- KEYS[1]  the lease set: a sorted set of holder -> lease deadline (ms, server time)
-- ARGV[1]  holder ID
-- ARGV[2]  limit: most holders at once
-- ARGV[3]  lease time in ms
--
-- Returns {acquired (0|1), count, deadline ms, retry-after ms}.
-- A refused call returns deadline 0 and the time until the earliest lease lapses.
-- The first command fails with WRONGTYPE before anything is written when
-- KEYS[1] holds another type.

local key, holder = KEYS[1], ARGV[1]
local limit, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- A lease is live while now < deadline; lapsed leases free their own slot only.
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)

local held = redis.call('ZSCORE', key, holder)
local count = redis.call('ZCARD', key)
if not held and count >= limit then
	local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
	return {0, count, 0, tonumber(first[2]) - now}
end

local deadline = now + ttl
redis.call('ZADD', key, deadline, holder)
if not held then
	count = count + 1
end
-- The key lapses with its last lease, so an idle key costs nothing.
local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', key, last[2])
return {1, count, deadline, 0}
