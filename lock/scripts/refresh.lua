-- refresh: extend the owner's lease to the lease time from now, if the
-- owner still holds the lock; a longer lease it holds is kept.
--
-- KEYS[1]  the lock: a string holding the owner's token, with a PX expiry,
--          marked ('+' after it) once someone waits (see unlock.lua)
-- ARGV[1]  the owner's token
-- ARGV[2]  lease time, ms
-- KEYS[2]  optional: the owner record of the owner's Mutex (see owner.go),
--          set to ARGV[3] with an expiry of ARGV[4] ms before anything else
--
-- Returns {1, the server's clock in ms} when the owner holds the lock, so
-- that the owner knows its lease lasts at least the lease time from then
-- (see gone.lua); else {0}: a lock that lapsed is never taken again by a
-- refresh. A call sent again answers as its first run did, and moves the
-- lease on by the time between the two.

local lock, token, ttl = KEYS[1], ARGV[1], ARGV[2]
if KEYS[2] then
	redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
end

local held = redis.call('GET', lock)
if held ~= token and held ~= token .. '+' then
	return {0}
end
redis.call('PEXPIRE', lock, ttl, 'GT')
local t = redis.call('TIME')
return {1, t[1] * 1000 + math.floor(t[2] / 1000)}
