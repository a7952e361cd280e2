-- messages: read one page of the queue's messages in one state. It writes
-- nothing.
--
-- KEYS     the queue's eight keys (see lib.lua)
-- ARGV[1]  the state: 'ready' (due by the server's clock, not delivered),
--          'delayed' (not due yet), 'inflight' (delivered and not acked;
--          a lapsed lease is here until a poll gives its message back) or
--          'dead'
-- ARGV[2]  how many to skip, from the first
-- ARGV[3]  how many, at most
--
-- Returns {1, id, payload, deliveries so far, time (ms), lease deadline
-- (ms), ...}, five fields a message, in the order the state has:
--   ready, delayed  by due time, earliest first (equal times in the order
--                   they are delivered); the time is the due time, the
--                   deliveries those its entry counts, the deadline 0
--   inflight        by lease deadline, earliest first; the time is when
--                   the message became due, the deliveries count this one
--   dead            by when it was dead-lettered, oldest first; the time
--                   is that, the deadline 0
-- A message in flight whose delivery is not found (none is, while a
-- script runs) is left out.

-- #include lib.lua

local state, offset, count = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {1}

-- add appends one message's fields.
local function add(id, deliveries, at, deadline)
	out[#out + 1] = id
	out[#out + 1] = redis.call('HGET', bodies, id) or ''
	out[#out + 1] = deliveries
	out[#out + 1] = at
	out[#out + 1] = deadline
end

if state == 'ready' or state == 'delayed' then
	local now, entries = now_ms(), nil
	if state == 'ready' then
		entries = redis.call('ZRANGEBYSCORE', queue, '-inf', now, 'WITHSCORES', 'LIMIT', offset, count)
	else
		entries = redis.call('ZRANGEBYSCORE', queue, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', offset, count)
	end
	for i = 1, #entries, 2 do
		-- An entry is 'order id' or 'order id deliveries' (see lib.lua).
		local id, n = string.match(entries[i], '^%S+ (%S+) ?(%d*)$')
		add(id, tonumber(n) or 0, tonumber(entries[i + 1]), 0)
	end
elseif state == 'inflight' then
	local held = redis.call('ZRANGE', leases, offset, offset + count - 1, 'WITHSCORES')
	for i = 1, #held, 2 do
		local token, id = string.match(held[i], '^(%S+) (.*)$')
		local v = redis.call('HGET', bodies, token)
		if v then
			local due, attempt = string.match(v, '^(%d+) (%d+) ')
			add(id, tonumber(attempt), tonumber(due), tonumber(held[i + 1]))
		end
	end
else
	local ids = redis.call('ZRANGE', dead, offset, offset + count - 1, 'WITHSCORES')
	for i = 1, #ids, 2 do
		add(ids[i], tonumber(redis.call('HGET', attempts, ids[i]) or 0), tonumber(ids[i + 1]), 0)
	end
end
return out
