-- remove: take values out of the list.
--
-- KEYS[1]  the list (see lib.lua)
-- ARGV[1]  -max-1, in decimal: ZREMRANGEBYRANK from 0 to it drops all
--          but the max newest items
-- ARGV[2]  max age in ms; 0: items never age out
-- ARGV[3..] the values
--
-- Returns {1, how many of the values were in the list}. It first drops the
-- items too old or beyond the max, which a reader no longer sees, so they
-- do not count. A list emptied this way is deleted, as Redis deletes an
-- empty sorted set. Run twice, as a re-sent call is, the second run finds
-- the values gone and counts 0 for them.
--
-- All of it happens or none of it: the first command fails with WRONGTYPE
-- on a key of another type, before anything is written (TIME, run first
-- when there is a max age, writes nothing), and no later one can fail:
-- the bounds and the trim's rank are as in add.lua, and the values, at
-- most MaxBatch (1000), are well within what unpack takes.

local list = KEYS[1]
if ARGV[2] ~= '0' then
-- #include lib.lua
	prune_age(now_us(), tonumber(ARGV[2]))
end
redis.call('ZREMRANGEBYRANK', list, 0, ARGV[1])
return {1, redis.call('ZREM', list, unpack(ARGV, 3))}
