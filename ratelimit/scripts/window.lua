-- window.lua: the fixed window on one key, for allow_all.lua and for
-- allow_window.lua's read-first path, on the classic counter: the key
-- holds a plain integer, the count of the current window, whose expiry is
-- the end of the window.

-- window_read returns the key's count and its PTTL (-2: no key, -1: no
-- expiry), or nil when the key holds a string that is not an integer.
-- GET fails with WRONGTYPE on another type.
local function window_read(key)
	local value = redis.call('GET', key)
	if not value then
		return 0, -2
	end
	if not string.match(value, '^%-?%d+$') then
		return nil
	end
	return tonumber(value), redis.call('PTTL', key)
end

-- window_fits reports whether n more events fit a window holding count:
-- n <= rate - count, which is exact, where count + n, up to 2^54, is not
-- (2^53 - 1 + 2 rounds to 2^53 and would pass a rate of 2^53).
local function window_fits(count, n, rate)
	return n <= rate - count
end

-- window_repair gives a count found without an expiry (left by a copy of
-- the pattern that sent INCR and EXPIRE apart, redis/redis#4423) the
-- window as its expiry, and returns the PTTL.
local function window_repair(key, window, ttl)
	if ttl == -1 then
		redis.call('PEXPIRE', key, window)
		return window
	end
	return ttl
end

-- window_count counts n events; the first starts the window, as the
-- classic EXPIRE on the first hit does. Returns the count and the PTTL.
local function window_count(key, window, n, ttl)
	local count = redis.call('INCRBY', key, n)
	if ttl == -2 then
		redis.call('PEXPIRE', key, window)
		ttl = window
	end
	return count, ttl
end

-- window_reply returns {allowed, remaining, retry after, reset after},
-- times in µs. A refusal waits for the window's end, or never (-1) when
-- n is above the rate.
local function window_reply(count, ttl, rate, n, ok)
	local reset = math.max(ttl, 0) * 1000
	local remaining = math.max(rate - count, 0)
	if ok then
		return {1, remaining, 0, reset}
	end
	if n > rate then
		return {0, remaining, -1, reset}
	end
	-- A key at PTTL 0 lives out its last millisecond.
	return {0, remaining, math.max(ttl, 1) * 1000, reset}
end
