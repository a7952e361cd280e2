-- add: add values to the list, newest last, and trim it, in one step, so
-- that no reader ever sees more than the max.
--
-- KEYS[1]  the list (see lib.lua)
-- ARGV[1]  -max-1, in decimal: ZREMRANGEBYRANK from 0 to it drops all
--          but the max newest items
-- ARGV[2]  max age in ms; 0: items never age out
-- ARGV[3]  the list's expiry in ms after this add, in decimal; 0: none set
-- ARGV[4..] the values, oldest first
--
-- Returns {1}. A value already in the list moves to the front, with the
-- time of this add; so does every value of an add run twice, as a re-sent
-- call is: the second run is a second add.
--
-- All of it happens or none of it: no command can fail once one has
-- written. The first, ZRANGE, fails with WRONGTYPE on a key of another
-- type, before anything is written. After it, every score is a number
-- printed with %.17g, which Redis reads back as that number; ARGV[1] and
-- ARGV[3] are integers that New bounded (the expiry at 2^32 s, so the
-- server's time plus it cannot overflow), passed on as the text they came
-- as; and Redis refuses a script's write for lack of memory only before
-- its first write.

-- #include lib.lua

local newest = redis.call('ZRANGE', list, -1, -1, 'WITHSCORES')[2]
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
prune(now, ARGV[1], tonumber(ARGV[2]))
if ARGV[3] ~= '0' then
	redis.call('PEXPIRE', list, ARGV[3])
end
return {1}
