-- refresh: extend the owner's lease to the lease time from now, if the
-- owner still holds the lock; a longer lease it holds is kept.
--
-- KEYS[1]  the lock: a string holding the owner's token, with a PX expiry
-- ARGV[1]  the owner's token
-- ARGV[2]  lease time, ms
--
-- Returns 1 when the owner holds the lock, else 0: a lock that lapsed is
-- never taken again by a refresh.

local lock, token, ttl = KEYS[1], ARGV[1], ARGV[2]

if redis.call('GET', lock) ~= token then
	return 0
end
redis.call('PEXPIRE', lock, ttl, 'GT')
return 1
