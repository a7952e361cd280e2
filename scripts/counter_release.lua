-- counter_release: give back one unit of a plain integer counter, never going below 0.
-- Same data as the seed's script.
--
-- KEYS[1]  the counter: a string holding an integer
--
-- Returns 1 when a unit was given back, 0 when the counter was already 0 or gone.

local key = KEYS[1]

local value = redis.call('GET', key)
local count = tonumber(value or '0')
if not count then
	return redis.error_reply('ERR value is not an integer')
end
if count <= 0 then
	return 0
end
redis.call('DECR', key)
return 1
