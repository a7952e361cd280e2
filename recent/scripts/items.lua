-- items: read a page of the list, newest first. It writes nothing.
--
-- KEYS[1]  the list (see lib.lua)
-- ARGV[1]  max age in ms; 0: items never age out
-- ARGV[2]  offset: how many of the newest items to skip
-- ARGV[3]  count: the most items to return
--
-- Returns {1, value, score, value, score, ...}, newest first, of the items
-- not older than the max age; the caller keeps offset + count within the
-- max, so items a trim has yet to drop are never read.

-- #include lib.lua

local bound = oldest_kept(now_ms(), tonumber(ARGV[1]))
local page = redis.call('ZREVRANGEBYSCORE', list, '+inf', bound, 'WITHSCORES', 'LIMIT', ARGV[2], ARGV[3])
table.insert(page, 1, 1)
return page
