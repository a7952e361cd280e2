-- allow_window: count n events in the current fixed window if all of them
-- fit, on the classic INCR-and-EXPIRE counter, so that such a script can
-- share the key.
--
-- KEYS[1]  the limit's key: the window's count, a plain integer whose
--          expiry ends the window (see window.lua)
-- ARGV[1]  the window, ms
-- ARGV[2]  the rate: the most events per window
-- ARGV[3]  n, the events asked for, 0 to 2^53; 0 asks without counting
-- KEYS[2]  optional: the rate record beside the user's key (see record.go),
--          set to ARGV[4] with an expiry of ARGV[5] ms before anything else
--
-- Returns {allowed (0|1), the status; remaining; retry after µs (0 when
-- allowed, -1 when n is above the rate); reset after µs}. A refusal leaves
-- the count as it found it; a count found without an expiry gets the
-- window as one either way. A key of another kind, or a string that is no
-- count, fails with an error and is left as it was.
--
-- The common call, 1 <= n <= rate < 2^53, counts first and looks after: INCRBY
-- adds n, or fails with nothing written on a key of another type
-- (WRONGTYPE), on a string that is no integer and on a sum beyond 64 bits,
-- which then take the read-first path below. A count of at most the rate
-- after it means n fit (count - n events were there before). A count of
-- exactly n found no events: the key was absent, and INCRBY made it
-- without an expiry, so the call starts the window, as the classic EXPIRE
-- on the first hit does (PEXPIRE NX, which leaves a count of 0 that had an
-- expiry, written by some other client, with its window). Above the rate,
-- INCRBY -n takes the n back within the same script, so nothing is
-- counted and no other call sees the sum. The count is an exact integer in Redis;
-- as a Lua number it is exact up to 2^53, and a sum above that is read as
-- at least 2^53, above such a rate, so each comparison is exact (a rate of
-- 2^53 itself takes the read-first path, whose test is exact up to it).
--
-- A call carries no identity, so a re-sent call (its reply lost) runs
-- again as a new one: it counts only if n still fits the rate after count,
-- so no run, first or again, takes the count past the rate.

local key = KEYS[1]
if KEYS[2] then
	redis.call('SET', KEYS[2], ARGV[#ARGV - 1], 'PX', ARGV[#ARGV])
end
local window, rate, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])

if n > 0 and n <= rate and rate < 2^53 then
	local count = redis.pcall('INCRBY', key, n)
	if type(count) == 'number' then
		local ttl = -1
		if count ~= n or redis.call('PEXPIRE', key, window, 'NX') == 0 then
			ttl = redis.call('PTTL', key)
		end
		if ttl == -1 then
			-- A new window, or a count left without an expiry by a copy of
			-- the pattern that sent INCR and EXPIRE apart (redis/redis#4423).
			if count ~= n then
				redis.call('PEXPIRE', key, window)
			end
			ttl = window
		end
		if count <= rate then
			return {1, rate - count, 0, ttl * 1000}
		end
		redis.call('INCRBY', key, -n)
		-- A key at PTTL 0 lives out its last millisecond.
		return {0, math.max(rate - (count - n), 0), math.max(ttl, 1) * 1000, ttl * 1000}
	end
end

-- Asking without counting (n = 0), n above the rate, a rate of 2^53, or a
-- key INCRBY refused: read first, as allow_all.lua does.

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
