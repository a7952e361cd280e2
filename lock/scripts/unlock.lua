-- unlock: free the lock if the owner still holds it and nobody waits.
--
-- KEYS[1]  the lock: a string holding the owner's token, with a PX expiry
-- KEYS[2]  queue: sorted set, waiting token -> arrival number
-- ARGV[1]  the owner's token
--
-- Returns 1 when the owner held the lock and it is free now; 0 when the
-- owner no longer held it (it lapsed, or another owner holds it now, the
-- seed's say), which is left as it is; 2 when the owner holds it and
-- someone waits, for the owner to hand it over with hand_off.lua. The
-- commonest unlock, with nobody waiting, thus takes the keys and argument
-- of a bare compare-and-delete and one read more.

if redis.call('GET', KEYS[1]) ~= ARGV[1] then
	return 0
end
if redis.call('EXISTS', KEYS[2]) == 1 then
	return 2
end
redis.call('DEL', KEYS[1])
return 1
