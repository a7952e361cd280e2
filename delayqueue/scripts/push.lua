-- push: queue messages, each due after a delay or at a time on the
-- server's clock, and wake one waiter when a consumer should look.
--
-- KEYS     the queue's seven keys (see lib.lua)
-- ARGV[1]  'command channel': the notice command ('publish' or
--          'spublish') and the notice channel
-- ARGV[2+3k], ARGV[3+3k], ARGV[4+3k]  message k: payload, delay (ms),
--          and due time (ms; 0: now plus the delay)
--
-- Returns the ids of the messages, in order. An id is the push's time on
-- the server's clock in ms, 13 digits, '-' and a 6-digit sequence number
-- within that ms, so ids grow in push order, as text too, and messages
-- due at the same ms come out in push order. A key of another type fails
-- the push with WRONGTYPE before anything is written.

-- #include lib.lua

local err = check_types()
if err then
	return err
end
local notify = ARGV[1]
local now = now_ms()
local last = redis.call('HMGET', info, 'ms', 'seq')
local ms, seq = tonumber(last[1]) or 0, tonumber(last[2]) or 0
if now > ms then
	ms, seq = now, 0
end
local ids, earliest = {}, nil
for k = 2, #ARGV, 3 do
	seq = seq + 1
	if seq > 999999 then
		ms, seq = ms + 1, 1
	end
	local id = string.format('%013d-%06d', ms, seq)
	local due = tonumber(ARGV[k + 2])
	if due == 0 then
		due = now + tonumber(ARGV[k + 1])
	end
	redis.call('ZADD', queue, due, id)
	redis.call('HSET', bodies, id, ARGV[k])
	redis.call('HSET', attempts, id, 0)
	ids[#ids + 1] = id
	earliest = math.min(earliest or due, due)
end
redis.call('HSET', info, 'ms', ms, 'seq', seq)
schedule(earliest, now, notify)
return ids
