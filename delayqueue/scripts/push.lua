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
-- Returns {1, how many messages it queued}. A message is queued when HSET
-- adds its body: a push sent again after its reply was lost finds the
-- bodies its first run wrote and queues nothing twice. Message k takes
-- the order number n - K + k, where n is info's 'seq' after HINCRBY adds
-- K, the number of messages: order numbers only grow while the queue
-- holds a message (a push sent again skips some, which only leaves gaps).
-- Its order key is the number plus 10^13, 14 digits, for a number below
-- 8 * 10^13, else 'b' and the number in 16 digits: order keys sort as
-- their numbers, after a given-back message's '0', so messages due at the
-- same ms come out in push order.
--
-- Its commands: TIME; ZRANGE of the waiter that registered last (see
-- live_waiter); HINCRBY; one HSET per message; one ZADD of every message
-- queued; and, when it wakes a waiter, ZREM and the notice. A key of another type fails the
-- push with WRONGTYPE before anything is written: the read fails on
-- waiters, the first write on info, and the HSET of the first message on
-- bodies; a ZADD that fails on queue has the bodies and the order number
-- this run wrote taken back first.

-- #include lib.lua
-- #include wake.lua

local notify = ARGV[1]
local now = now_ms()
local first = live_waiter(now)
local count = (#ARGV - 1) / 4
local seq = redis.call('HINCRBY', info, 'seq', count) - count

-- failed is the error of a write that failed, and wrote the bodies this
-- run wrote before it, to take back.
local failed, wrote
if count == 1 then
	-- One message, the common case, without the tables of a batch.
	local id = ARGV[2]
	local added = redis.pcall('HSET', bodies, id, ARGV[3])
	if added == 0 then
		return {1, 0}
	elseif added ~= 1 then
		failed, wrote = added, {}
	else
		local due = ARGV[5] + 0
		if due == 0 then
			due = now + ARGV[4]
		end
		seq = seq + 1
		local e
		if seq < 8e13 then
			e = (seq + 1e13) .. ' ' .. id
		else
			e = string.format('b%016d %s', seq, id)
		end
		added = redis.pcall('ZADD', queue, due, e)
		if added ~= 1 then
			failed, wrote = added, {id}
		else
			schedule(due, now, first, notify)
			return {1, 1}
		end
	end
else
	local ids, add, earliest = {}, {}, nil
	for k = 2, #ARGV, 4 do
		local id = ARGV[k]
		seq = seq + 1
		local added = redis.pcall('HSET', bodies, id, ARGV[k + 1])
		if type(added) == 'table' then
			failed = added
			break
		end
		if added == 1 then
			ids[#ids + 1] = id
			local due = tonumber(ARGV[k + 3])
			if due == 0 then
				due = now + tonumber(ARGV[k + 2])
			end
			add[#add + 1] = due
			if seq < 8e13 then
				add[#add + 1] = (seq + 1e13) .. ' ' .. id
			else
				add[#add + 1] = string.format('b%016d %s', seq, id)
			end
			earliest = math.min(earliest or due, due)
		end
	end
	if not failed and #ids > 0 then
		local added = redis.pcall('ZADD', queue, unpack(add))
		if type(added) == 'table' then
			failed = added
		else
			schedule(earliest, now, first, notify)
		end
	end
	if not failed then
		return {1, #ids}
	end
	wrote = ids
end

-- A write failed: take back the bodies and the order numbers this run
-- wrote, and fail with its error.
if #wrote > 0 then
	redis.call('HDEL', bodies, unpack(wrote))
end
if redis.call('HINCRBY', info, 'seq', -count) <= 0 then
	redis.call('HDEL', info, 'seq')
end
return failed
