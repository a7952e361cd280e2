-- obtain: take the lock for an owner if no one holds it. Never waits.
--
-- KEYS[1]  the lock: a string holding the owner's token, with a PX expiry
--          (the seed's data, and redislock's and redsync's)
-- KEYS[2]  the last fence issued: see fence.lua
-- ARGV[1]  the owner's token
-- ARGV[2]  lease time, ms
--
-- Returns the new owner's fence (above zero) when the lock was taken;
-- otherwise -(ms until the holder's lease lapses), or 0 when the holder's
-- key has no expiry. SET ... GET reads the key as it sets it, so a key of
-- another type fails with WRONGTYPE and is left as it was.

local lock, fence, token, ttl = KEYS[1], KEYS[2], ARGV[1], ARGV[2]

if redis.call('SET', lock, token, 'NX', 'GET', 'PX', ttl) then
	return -math.max(redis.call('PTTL', lock), 0)
end

-- #include fence.lua

return next_fence(fence, ttl)
