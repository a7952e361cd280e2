-- reset_window: delete a fixed window's count, so that the key's next
-- event starts a new window with the full allowance.
--
-- KEYS[1]  the limit's key: the window's count, a plain integer whose
--          expiry ends the window (see window.lua)
--
-- Returns {1} when it deleted a count, {0} when there was none. A key
-- that holds anything else (another package's value) fails with an
-- error, WRONGTYPE from GET or the script's own, and is left as it was.
--
-- A call carries no identity, so a re-sent call (its reply lost) deletes
-- again: the key is at its full allowance as of the last run.

local key = KEYS[1]
local value = redis.call('GET', key)
if not value then
	return {0}
end
if not string.match(value, '^%-?%d+$') then
	return redis.error_reply('ERR the key holds a string that is not a count')
end
redis.call('DEL', key)
return {1}
