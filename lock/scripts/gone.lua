-- gone: the answer of a script that frees the lock and finds it no longer
-- held by its caller, included where the script has its
-- "-- #include gone.lua" line (hand_off.lua; unlock.lua's caller reads
-- the clock itself, by the same rule: see Mutex.unlockRun).
--
-- The caller passes the deadline, in ms by the server's clock, that its
-- lease lasts at least until, as the server's replies to its lock and
-- refreshes prove it, or 0 when it does not know it. A lease that has not
-- run out is gone only by its owner's unlock, so a call that finds it gone
-- before that deadline was run already (go-redis sent it again after its
-- reply was lost): its first run freed the lock, and it answers 1 as that
-- run did. Past the deadline, or with none, it answers 0. Only this path,
-- not the common one, reads the clock.
local function gone(deadline)
	deadline = tonumber(deadline)
	if deadline > 0 then
		local t = redis.call('TIME')
		if t[1] * 1000 + math.floor(t[2] / 1000) < deadline then
			return 1
		end
	end
	return 0
end
