-- acks: ack many deliveries in one call, each answered as ack.lua alone,
-- run for each in turn, would answer it.
--
-- KEYS     the queue's eight keys (see lib.lua)
-- ARGV[3k-2], ARGV[3k-1], ARGV[3k]  delivery k: its message's id, its
--          token, and the lease deadline Poll gave it (ms, server clock)
--
-- Returns {1, then for each delivery, in order, 1 or 0}: ack.lua's status
-- for it. The calls, run in turn in one script, share one clock reading,
-- and each reads what the earlier ones left: a delivery holds its lease
-- when its lease is there with a deadline after now, and no earlier
-- delivery of the batch removed it (the same delivery given twice: the
-- second is a re-sent ack, and finds its body gone); for one that does
-- not, ack.lua's second test reads whether the body is there, which no
-- earlier ack of the batch removed. Those that hold their lease are
-- removed as ack.lua removes one, by one HDEL of the bodies and the
-- deliveries, one HDEL of the push tokens and one ZREM of the leases, so
-- the batch leaves what the acks in turn would leave. A batch sent again
-- after its reply was lost answers each delivery as its first run did,
-- as ack.lua does (see ack.lua). A queue left without messages leaves no
-- keys.
--
-- Its commands: TIME, ZMSCORE of the leases, HGET of a body for each
-- delivery that no longer holds its lease before its deadline, and then,
-- when some hold theirs, the HDELs and the ZREM, and EXISTS of the
-- queue's three sorted sets. The ZMSCORE fails on leases, and the first
-- HDEL, the first write, on bodies, when either holds another type, as
-- ack.lua's commands do.

-- #include lib.lua

local now = now_ms()
local n = #ARGV / 3
local names = {}
for k = 1, n do
	names[k] = ARGV[3 * k - 1] .. ' ' .. ARGV[3 * k - 2]
end
local deadlines = redis.call('ZMSCORE', leases, unpack(names))
local out, fields, ids, gone, removed = {1}, {}, {}, {}, {}
for k = 1, n do
	local id, lease = ARGV[3 * k - 2], names[k]
	local deadline = tonumber(deadlines[k])
	if deadline == nil or deadline <= now or gone[lease] then
		if tonumber(ARGV[3 * k]) > now and (removed[id] or not redis.call('HGET', bodies, id)) then
			out[k + 1] = 1
		else
			out[k + 1] = 0
		end
	else
		gone[lease], removed[id] = true, true
		fields[#fields + 1] = id
		fields[#fields + 1] = ARGV[3 * k - 1]
		ids[#ids + 1] = id
		out[k + 1] = 1
	end
end
if #ids > 0 then
	redis.call('HDEL', bodies, unpack(fields))
	redis.pcall('HDEL', pushes, unpack(ids))
	local held = {}
	for lease in pairs(gone) do
		held[#held + 1] = lease
	end
	redis.call('ZREM', leases, unpack(held))
	if redis.call('EXISTS', queue, leases, dead) == 0 then
		redis.call('HDEL', bodies, '#lease')
		redis.pcall('HDEL', info, 'seq', 'armed', 'keeper')
	end
end
return out
