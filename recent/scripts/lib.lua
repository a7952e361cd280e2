-- lib: the scores of the recent list's scripts, and the helpers that
-- bound an item's age, included where a script has its "-- #include
-- lib.lua" line: in the branch that runs only with a max age, so that a
-- call without one defines none of them, after the script has set
-- list = KEYS[1].
--
-- Every script takes one key, the list's (see Config.Key: the Key with
-- "recent" added in its hash slot):
--   KEYS[1]  list  sorted set, value -> score, the time of its last add
--
-- A score is the server's time of the add in whole microseconds since
-- 1970, an integer, which a small sorted set (a listpack) keeps as an
-- integer and compares without parsing text. Every add takes the
-- microsecond after the newest score, or the server's microsecond if that
-- is later, so scores grow in the order the server runs the adds, items
-- added at one microsecond or in one call included, and do not depend on
-- the values' text. A time in microseconds stays below 2^52 (and so is
-- exact in a double, and kept as an integer) until the year 2112, and is
-- at least 2^32 from 1970-01-01 01:11 UTC on.
--
-- A score below 2^32 is in seconds: whole seconds, as a plain ZADD script
-- writes, or seconds with a binary fraction of 2^21 ticks (2048 a
-- millisecond), as this package wrote before it kept microseconds. Such
-- items sort below every microsecond score, and age out by their own
-- seconds: the scripts that bound the age read and prune the two ranges
-- apart, [oldest kept in seconds, 2^32) and [oldest kept in
-- microseconds, +inf). New bounds the max age at 2^32 s, so every bound
-- below is exact in a double.

local SECONDS = '4294967296' -- 2^32: a score below it is in seconds

-- now_us is the server's clock in microseconds (TIME; add.lua, which
-- reads it whatever the max age, does so itself).
local function now_us()
	local t = redis.call('TIME')
	return t[1] * 1000000 + t[2]
end

-- oldest_kept is the lowest score an item may have and be kept, given the
-- max age in ms, above 0: an item exactly max_age old, to the ms, is kept.
-- It returns two ZRANGEBYSCORE bounds: for microsecond scores, at least
-- 2^32, and for scores in seconds, the first tick of that millisecond.
local function oldest_kept(now, max_age)
	local ms = math.floor(now / 1000) - max_age
	local seconds = math.floor(ms / 1000) + (ms % 1000) * 2048 / 2097152
	return string.format('%d', math.max(ms * 1000, 4294967296)), string.format('%.17g', seconds)
end

-- prune_age drops the items older than max_age, in both ranges.
local function prune_age(now, max_age)
	local us, s = oldest_kept(now, max_age)
	redis.call('ZREMRANGEBYSCORE', list, SECONDS, '(' .. us)
	redis.call('ZREMRANGEBYSCORE', list, '-inf', '(' .. s)
end
