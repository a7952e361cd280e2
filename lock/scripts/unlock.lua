-- unlock: free the lock if the owner still holds it and nobody waits.
--
-- KEYS[1]  the lock: a string holding the owner's token, with a PX expiry,
--          and a mark ('+' after the token) once someone waits for it
-- ARGV[1]  the owner's token
--
-- Returns a status alone: 1 when the owner held the lock and it is free
-- now; 2 when the owner holds it, marked, for the owner to hand it to the
-- first waiter with hand_off.lua (which frees it if nobody waits any
-- longer); 0 when the owner no longer holds it (it lapsed, or another
-- owner holds it now, another client's say), which is left as it is.
--
-- A waiter that queues behind an owner of this package marks the owner's
-- token (obtain_queued.lua), and an owner handed the lock, or taking it
-- from the queue, while others wait is marked as it gets it (hand_off.lua,
-- obtain_queued.lua). So a token found unmarked has had no waiter queue
-- behind it, and the commonest unlock frees it as a bare compare-and-delete
-- does: the same two commands, one key, one argument. (A waiter queued
-- before a TryLock took the lock, while it was free, marks it at its next
-- try; an unlock before that finds the lock free for that try, which comes
-- when the lock it waited for lapsed, or within a second.)
--
-- A call sent again (its reply was lost) finds the lock gone and answers
-- 0; the caller then reads the server's clock and reports the unlock done
-- if its lease deadline has not passed, as hand_off.lua does in its script
-- (see gone.lua and Mutex.unlockRun), since its first run freed the lock
-- or handed it on.

local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then
	redis.call('DEL', KEYS[1])
	return 1
end
if held == ARGV[1] .. '+' then
	return 2
end
return 0
