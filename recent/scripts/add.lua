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
-- Returns 1, the status. A value already in the list moves to the front,
-- with the time of this add; so does every value of an add run twice, as
-- a re-sent call is: the second run is a second add.
--
-- The values of several Adds, sent in one call (see sendAdds in
-- scripts.go), are one add of their values, each Add's in turn: what
-- adds run one after the other in one microsecond leave, since each takes
-- the microseconds after the one before it and the trim and the max age
-- drop the same items once at the end as after each (an item an earlier
-- trim would drop has max items newer than it, which later adds only
-- make newer), and the reply, 1, is each Add's.
--
-- The values take the server's microsecond and those after it, unless an
-- item already scores that microsecond or later (the server's clock stood
-- still or stepped back, or more than one add a microsecond came in): then
-- they take those after the newest score. ZCOUNT finds that out with an
-- integer reply, from the newest item alone, and only then does ZRANGE
-- read the newest score; a score this package writes is an integer below
-- 2^53, exact in a double, and the next one, printed with %.17g, reads back
-- as that number (a score it never writes, such as inf, still gives one
-- that is not lower).
--
-- All of it happens or none of it: no command can fail once one has
-- written. The first, ZCOUNT, fails with WRONGTYPE on a key of another
-- type, before anything is written (TIME, before it, writes nothing). After it, every score is a number
-- printed in decimal, which Redis reads back as that number; ARGV[1] and
-- ARGV[3] are integers that New bounded (the expiry at 2^32 s, so the
-- server's time plus it cannot overflow), passed on as the text they came
-- as; and Redis refuses a script's write for lack of memory only before
-- its first write.

local list = KEYS[1]
local t = redis.call('TIME')
local clock = t[1] * 1000000 + t[2]
local now = clock
local at = string.format('%d', now)
if redis.call('ZCOUNT', list, at, '+inf') > 0 then
	now = tonumber(redis.call('ZRANGE', list, -1, -1, 'WITHSCORES')[2]) + 1
	at = string.format('%.17g', now)
end
if #ARGV == 4 then
	redis.call('ZADD', list, at, ARGV[4])
else
	local args = {at, ARGV[4]}
	for i = 5, #ARGV do
		now = now + 1
		args[#args + 1] = string.format('%.17g', now)
		args[#args + 1] = ARGV[i]
	end
	redis.call('ZADD', list, unpack(args))
end
if ARGV[2] ~= '0' then
-- #include lib.lua
	prune_age(clock, tonumber(ARGV[2]))
end
redis.call('ZREMRANGEBYRANK', list, 0, ARGV[1])
if ARGV[3] ~= '0' then
	redis.call('PEXPIRE', list, ARGV[3])
end
return 1
