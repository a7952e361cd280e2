-- leave: a consumer whose Poll ended without a message leaves the waiters;
-- if it was the keeper, another waiter is woken to take its place. A
-- delivery its name names, which a call of that Poll made though the Poll
-- never got its reply, is given back: the message is due again, when it
-- was due before, with the attempt that delivery counted taken back, and
-- one waiter is woken to take it.
--
-- KEYS     the queue's eight keys (see lib.lua)
-- ARGV[1]  the consumer's name: its Poll's delivery token
-- ARGV[2]  'command channel' for notices (see push.lua)
--
-- Returns {1, 1} when the consumer was a waiter, else {1, 0}. A leave sent again
-- finds nothing more to do: its first run took the name off the waiters,
-- and the delivery out of leases and bodies. Only a Poll that failed or
-- ended runs this script, so the common path pays nothing for the give
-- back.

-- #include lib.lua
-- #include wake.lua
-- #include give.lua

local err = check_types()
if err then
	return err
end
local name, notify = ARGV[1], ARGV[2]
local was = redis.call('ZREM', waiters, name)
local woke = false
local due, attempt, id = delivery(name)
if id then
	redis.call('ZREM', leases, name .. ' ' .. id)
	redis.call('HDEL', bodies, name)
	redis.call('ZADD', queue, due, entry(id, attempt - 1))
	if redis.call('HGET', info, 'keeper') == name then
		redis.call('HDEL', info, 'armed', 'keeper')
	end
	local now = now_ms()
	schedule(due, now, live_waiter(now), notify)
	woke = true
end
if not woke and redis.call('HGET', info, 'keeper') == name then
	redis.call('HDEL', info, 'armed', 'keeper')
	wake(live_waiter(now_ms()), notify)
end
return {1, was}
