-- len: count the queue's messages. It writes nothing.
--
-- KEYS     the queue's eight keys (see lib.lua)
--
-- Returns {1, ready, delayed, in flight, dead}: messages due by the server's
-- clock, messages not due yet, messages delivered and not acked (a lapsed
-- lease counts here until a poll gives its message back), dead letters.

-- #include lib.lua

local now = now_ms()
local ready = redis.call('ZCOUNT', queue, '-inf', now)
return {1, ready, redis.call('ZCARD', queue) - ready, redis.call('ZCARD', leases), redis.call('ZCARD', dead)}
