-- unlock: free the lock if the owner still holds it and nobody waits.
--
-- KEYS[1]  the lock: a string holding the owner's token, with a PX expiry
-- KEYS[2]  queue: sorted set, waiting token -> arrival number
-- ARGV[1]  the owner's token
-- ARGV[2]  the owner's lease deadline (ms, the server's clock), as the
--          server's replies to its lock and refreshes prove it at least;
--          0 when it is not known
--
-- Returns a status alone: 1 when the owner held the lock and it is free
-- now; 0 when the owner no longer held it (it lapsed, or another owner
-- holds it now, another client's say), which is left as it is; 2 when the
-- owner holds it and someone waits, for the owner to hand it over with
-- hand_off.lua. The commonest unlock, with nobody waiting, thus takes the
-- keys of a bare compare-and-delete and one read more.
--
-- A call sent again (its reply was lost) answers as its first run did,
-- which freed the lock or handed it on before the owner's deadline (see
-- gone.lua).

local lock, token = KEYS[1], ARGV[1]

if redis.call('GET', lock) ~= token then
	-- #include gone.lua
	return gone(ARGV[2])
end
if redis.call('EXISTS', KEYS[2]) == 1 then
	return 2
end
redis.call('DEL', lock)
return 1
