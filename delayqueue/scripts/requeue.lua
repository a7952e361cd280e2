-- requeue: move dead letters back to the queue, due now, with their
-- attempts counted from 0 again, and wake one waiter.
--
-- KEYS     the queue's eight keys (see lib.lua)
-- ARGV[1]  'command channel' for notices (see push.lua)
-- ARGV[2..] the ids
--
-- Returns {1, how many of the ids are requeued}: moved now, or moved by a
-- requeue before and not delivered since (their entry counts 0 deliveries,
-- written out, which only a requeue writes), so that a requeue sent again
-- after its reply was lost counts what its first run moved.

-- #include lib.lua
-- #include wake.lua
-- #include give.lua

local err = check_types()
if err then
	return err
end
local now, moved, requeues = now_ms(), 0, 0
for i = 2, #ARGV do
	local id = ARGV[i]
	if redis.call('ZREM', dead, id) == 1 then
		redis.call('HDEL', attempts, id)
		redis.call('ZADD', queue, now, requeued(id))
		moved = moved + 1
	elseif redis.call('ZSCORE', queue, requeued(id)) then
		requeues = requeues + 1
	end
end
if moved > 0 then
	schedule(now, now, live_waiter(now), ARGV[1])
end
return {1, moved + requeues}
