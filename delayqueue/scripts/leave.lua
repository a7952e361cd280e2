-- leave: a consumer that stops waiting leaves the waiters; if it was the
-- keeper, another waiter is woken to take its place.
--
-- KEYS     the queue's seven keys (see lib.lua)
-- ARGV[1]  the consumer's name
-- ARGV[2]  'command channel' for notices (see push.lua)
--
-- Returns 1 when the consumer was a waiter, else 0.

-- #include lib.lua

local err = check_types()
if err then
	return err
end
local name, notify = ARGV[1], ARGV[2]
local was = redis.call('ZREM', waiters, name)
if redis.call('HGET', info, 'keeper') == name then
	redis.call('HDEL', info, 'armed', 'keeper')
	wake_one(now_ms(), notify)
end
return was
