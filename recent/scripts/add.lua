-- add: add values to the list, newest last, and trim it, in one step, so
-- that no reader ever sees more than the max.
--
-- KEYS[1]  the list (see lib.lua)
-- ARGV[1]  max: the most items kept
-- ARGV[2]  max age in ms; 0: items never age out
-- ARGV[3]  the list's expiry in ms after this add; 0: none set
-- ARGV[4..] the values, oldest first
--
-- Returns 1. A value already in the list moves to the front, with the
-- time of this add. A key of another type fails at the first read, with
-- WRONGTYPE, before anything is written.

-- #include lib.lua

local newest = redis.call('ZRANGE', list, -1, -1, 'WITHSCORES')[2]
local max, max_age, expiry = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local now = now_ms()
local t = ticks_at(now)
if newest then
	t = math.max(t, math.floor(tonumber(newest) * UNIT) + 1)
end
local args = {}
for i = 4, #ARGV do
	args[#args + 1] = score(t)
	args[#args + 1] = ARGV[i]
	t = t + 1
end
redis.call('ZADD', list, unpack(args))
prune(now, max, max_age)
if expiry > 0 then
	redis.call('PEXPIRE', list, expiry)
end
return 1
