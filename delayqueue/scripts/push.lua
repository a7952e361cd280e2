-- push: queue messages, each due after a delay or at a time on the
-- server's clock, and wake one waiter when a consumer should look.
--
-- KEYS     the queue's seven keys (see lib.lua)
-- ARGV[1]  'command channel': the notice command ('publish' or
--          'spublish') and the notice channel
-- ARGV[2+4k], ARGV[3+4k], ARGV[4+4k], ARGV[5+4k]  message k: its id,
--          minted by the pusher, payload, delay (ms), and due time (ms; 0:
--          now plus the delay)
--
-- Returns {1, how many messages it queued}. A message is queued when HSET adds
-- its body: a push sent again after its reply was lost finds the bodies
-- its first run wrote and queues nothing twice. Each message queued gets
-- an order key, the push's time on the server's clock in ms and a
-- sequence number within that ms, so that messages due at the same ms
-- come out in push order. A key of another type fails the push with
-- WRONGTYPE before anything is written.

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
local queued, earliest = 0, nil
for k = 2, #ARGV, 4 do
	local id = ARGV[k]
	if redis.call('HSET', bodies, id, ARGV[k + 1]) == 1 then
		seq = seq + 1
		if seq > 999999 then
			ms, seq = ms + 1, 1
		end
		local due = tonumber(ARGV[k + 3])
		if due == 0 then
			due = now + tonumber(ARGV[k + 2])
		end
		redis.call('ZADD', queue, due, entry(ms, seq, id))
		queued = queued + 1
		earliest = math.min(earliest or due, due)
	end
end
if queued > 0 then
	redis.call('HSET', info, 'ms', ms, 'seq', seq)
	schedule(earliest, now, notify)
end
return {1, queued}
