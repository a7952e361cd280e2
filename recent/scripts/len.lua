-- len: count the list's items. It writes nothing.
--
-- KEYS[1]  the list (see lib.lua)
-- ARGV[1]  max age in ms; 0: items never age out
--
-- Returns {1, the number of items not older than the max age}; the caller
-- counts at most the max of them, since those beyond it are never read.

-- #include lib.lua

return {1, redis.call('ZCOUNT', list, oldest_kept(now_ms(), tonumber(ARGV[1])), '+inf')}
