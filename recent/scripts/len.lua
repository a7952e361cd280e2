-- len: count the list's items. It writes nothing.
--
-- KEYS[1]  the list (see lib.lua)
-- ARGV[1]  max: the most items kept
-- ARGV[2]  max age in ms; 0: items never age out
--
-- Returns the number of items not older than the max age, at most max.

-- #include lib.lua

local n = redis.call('ZCOUNT', list, oldest_kept(now_ms(), tonumber(ARGV[2])), '+inf')
return math.min(n, tonumber(ARGV[1]))
