-- len: count the list's items. It writes nothing.
--
-- KEYS[1]  the list (see lib.lua)
-- ARGV[1]  max age in ms; 0: items never age out
--
-- Returns {1, the number of items not older than the max age}; the caller
-- counts at most the max of them, since those beyond it are never read.
-- With a max age, it counts the two ranges of scores apart (see lib.lua).

local list = KEYS[1]
if ARGV[1] == '0' then
	return {1, redis.call('ZCARD', list)}
end

-- #include lib.lua

local us, s = oldest_kept(now_us(), tonumber(ARGV[1]))
return {1, redis.call('ZCOUNT', list, us, '+inf') + redis.call('ZCOUNT', list, s, '(' .. SECONDS)}
