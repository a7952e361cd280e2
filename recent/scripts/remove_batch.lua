-- remove_batch: take the values of several Removes out of the list, each
-- in turn, in one step, as remove.lua run for each of them one after the
-- other would.
--
-- KEYS[1]  the list (see lib.lua)
-- ARGV[1]  -max-1, in decimal, as in remove.lua
-- ARGV[2]  max age in ms; 0: items never age out
-- ARGV[3..] each Remove in turn: how many values it has, n, at least 1,
--          then its n values
--
-- Returns {1, c1, c2, ...}: for each Remove, in turn, how many of its
-- values were in the list when its turn came, which counts 0 for a value
-- an earlier one removed.
--
-- It drops the items too old or beyond the max once, first, as remove.lua
-- does, at one reading of the clock: remove.lua run once for each Remove,
-- in turn, in that microsecond, drops them in its first run, and its later
-- runs find nothing more to drop, since taking items out makes no item
-- older nor puts one below the max newest. Then ZREM takes each Remove's
-- values out and counts them, as each run of remove.lua does. Run twice,
-- as a re-sent call is, the second run finds the values gone and counts 0
-- for them.
--
-- All or nothing, as in remove.lua: the first command fails with
-- WRONGTYPE on a key of another type, before anything is written, and no
-- later one can fail; each Remove has a few values (see coalescedValues),
-- well within what unpack takes.

local list = KEYS[1]
if ARGV[2] ~= '0' then
-- #include lib.lua
	prune_age(now_us(), tonumber(ARGV[2]))
end
redis.call('ZREMRANGEBYRANK', list, 0, ARGV[1])
local counts = {1}
local i = 3
while i <= #ARGV do
	local n = tonumber(ARGV[i])
	counts[#counts + 1] = redis.call('ZREM', list, unpack(ARGV, i + 1, i + n))
	i = i + n + 1
end
return counts
