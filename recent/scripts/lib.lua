-- lib: helpers for the recent list's scripts, included where a script has
-- its "-- #include lib.lua" line.
--
-- Every script takes one key, the list's (see Config.Key: the Key with
-- "recent" added in its hash slot):
--   KEYS[1]  list  sorted set, value -> score, the time of its last add
--
-- A score is a time in seconds with a binary fraction: the whole part is
-- the second, and the fraction, in units of 1/2^21 s (ticks), holds the
-- millisecond (2048 ticks each) and a sequence within it. Every add takes
-- the tick after the newest score, or the first tick of its millisecond
-- on the server's clock if that is later, so scores grow in the order the
-- server runs the adds, items added at one millisecond or in one call
-- included, and do not depend on the values' text. A score of whole
-- seconds, as a plain ZADD script writes, is the first tick of its second,
-- so its items read as added at that second, before ours of that second.
-- Every tick count below 2^53 (seconds below 2^32) is exact in a double;
-- New bounds the max age at 2^32 s, so a time that far back is exact too.

local list = KEYS[1]
local UNIT = 2097152 -- ticks per second, 2^21
local PER_MS = 2048 -- ticks per millisecond

-- now_ms is the server's clock in ms.
local function now_ms()
	local t = redis.call('TIME')
	return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- ticks_at is the first tick of millisecond ms.
local function ticks_at(ms)
	return math.floor(ms / 1000) * UNIT + (ms % 1000) * PER_MS
end

-- score is the score of tick t, as text that reads back as the same double.
local function score(t)
	return string.format('%.17g', t / UNIT)
end

-- oldest_kept is the lowest score an item may have and be kept, given the
-- max age in ms (0: no bound), as a ZRANGEBYSCORE bound.
local function oldest_kept(now, max_age)
	if max_age == 0 then
		return '-inf'
	end
	return score(ticks_at(now - max_age))
end

-- prune drops the items older than max_age and all but the max newest,
-- given trim, the text of -max-1.
local function prune(now, trim, max_age)
	if max_age > 0 then
		redis.call('ZREMRANGEBYSCORE', list, '-inf', '(' .. oldest_kept(now, max_age))
	end
	redis.call('ZREMRANGEBYRANK', list, 0, trim)
end
