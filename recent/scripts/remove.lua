-- remove: take values out of the list.
--
-- KEYS[1]  the list (see lib.lua)
-- ARGV[1]  max: the most items kept
-- ARGV[2]  max age in ms; 0: items never age out
-- ARGV[3..] the values
--
-- Returns how many of the values were in the list. It first drops the
-- items too old or beyond the max, which a reader no longer sees, so they
-- do not count. A list emptied this way is deleted, as Redis deletes an
-- empty sorted set. A key of another type fails at the first command,
-- with WRONGTYPE, before anything is written.

-- #include lib.lua

prune(now_ms(), tonumber(ARGV[1]), tonumber(ARGV[2]))
return redis.call('ZREM', list, unpack(ARGV, 3))
