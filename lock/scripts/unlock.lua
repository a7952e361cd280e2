-- unlock: free the lock if the owner still holds it and nobody waits.
--
-- KEYS[1]  the lock: a string holding the owner's token, with a PX expiry,
--          and a mark ('+' after the token) once someone waits for it
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
-- hand_off.lua.
--
-- A waiter that queues behind an owner of this package marks the owner's
-- token (obtain_queued.lua), and an owner handed the lock, or taking it
-- from the queue, while others wait is marked as it gets it (hand_off.lua,
-- obtain_queued.lua). So a token found unmarked has had no waiter queue
-- behind it, and the commonest unlock frees it as a bare compare-and-delete
-- does, with the same two commands. A marked token checks the queue. (A
-- waiter queued before a TryLock took the lock, while it was free, marks
-- it at its next try; an unlock before that finds the lock free for that
-- try, which comes when the lock it waited for lapsed, or within a second.)
--
-- A call sent again (its reply was lost) answers as its first run did,
-- which freed the lock or handed it on before the owner's deadline (see
-- gone.lua).

local lock, token = KEYS[1], ARGV[1]

local held = redis.call('GET', lock)
if held == token then
	redis.call('DEL', lock)
	return 1
end
if held == token .. '+' then
	if redis.call('EXISTS', KEYS[2]) == 1 then
		return 2
	end
	redis.call('DEL', lock)
	return 1
end

-- #include gone.lua
return gone(ARGV[2])
