-- requeue: move dead letters back to the queue, due now, with their
-- attempts counted from 0 again, and wake one waiter.
--
-- KEYS     the queue's seven keys (see lib.lua)
-- ARGV[1]  'command channel' for notices (see push.lua)
-- ARGV[2..] the ids
--
-- Returns how many of the ids were dead letters, and were moved.

-- #include lib.lua

local err = check_types()
if err then
	return err
end
local now, moved = now_ms(), 0
for i = 2, #ARGV do
	local id = ARGV[i]
	if redis.call('ZREM', dead, id) == 1 then
		redis.call('HSET', attempts, id, 0)
		redis.call('ZADD', queue, now, id)
		moved = moved + 1
	end
end
if moved > 0 then
	schedule(now, now, ARGV[1])
end
return moved
