-- allow_window: count n events in the current fixed window if all of them
-- fit, on the classic INCR-and-EXPIRE counter, so that such a script can
-- share the key.
--
-- KEYS[1]  the limit's key: the window's count, a plain integer whose
--          expiry ends the window (see window.lua)
-- ARGV[1]  the window, ms
-- ARGV[2]  the rate: the most events per window
-- ARGV[3]  n, the events asked for, 0 to 2^53; 0 asks without counting
--
-- Returns {allowed (0|1), the status; remaining; retry after µs (0 when
-- allowed, -1 when n is above the rate); reset after µs}. A refusal counts nothing;
-- a count found without an expiry gets the window as one either way. The
-- key is read before any write, so a key of another kind fails with an
-- error and is left as it was.
--
-- A call carries no identity, so a re-sent call (its reply lost) runs
-- again as a new one: it counts only if n still fits the rate after count,
-- so no run, first or again, takes the count past the rate.

local key = KEYS[1]
local window, rate, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])

-- #include window.lua

local count, ttl = window_read(key)
if not count then
	return redis.error_reply('ERR the key holds a string that is not a count')
end
local ok = window_fits(count, n, rate)
ttl = window_repair(key, window, ttl)
if ok and n > 0 then
	count, ttl = window_count(key, window, n, ttl)
end
return window_reply(count, ttl, rate, n, ok)
