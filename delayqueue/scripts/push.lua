-- push: queue messages, each due after a delay or at a time on the
-- server's clock, and wake one waiter when a consumer should look.
--
-- KEYS     the queue's eight keys (see lib.lua)
-- ARGV[1]  'command channel': the notice command ('publish' or
--          'spublish') and the notice channel
-- ARGV[2+5k] .. ARGV[6+5k]  message k: its id; its push token, minted
--          per call by the pusher for an id its caller gave, else empty;
--          payload; delay (ms); and due time (ms; 0: now plus the delay)
--
-- Returns {1, how many messages it queued, then the 1-based number of
-- each message whose id another push queued}. A message is queued when
-- its body is added; a body already there is left as it is. It is this
-- push's own, written by its first run before the push was sent again
-- after its reply was lost, when the id was minted (no push token: no
-- other push has it, and HSET writes the body) or when the push token
-- kept in pushes is this one's (HSETNX writes the body of an id the
-- caller gave); else it is another push's, and the message's number is
-- in the reply. Message k takes the order number n - K + k,
-- where n is info's 'seq' after HINCRBY adds K, the number of messages:
-- order numbers only grow while the queue holds a message (a push sent
-- again skips some, which only leaves gaps). Its order key is the number
-- plus 10^13, 14 digits, for a number below 8 * 10^13, else 'b' and the
-- number in 16 digits: order keys sort as their numbers, after a
-- given-back message's '0', so messages due at the same ms come out in
-- push order.
--
-- Its commands: TIME; ZRANGE of the waiter that registered last (see
-- live_waiter); HINCRBY; one HSET per message of a minted id, and for an
-- id its caller gave an HSETNX and an HSET of its push token to pushes,
-- or an HGET of it when the body was there; one ZADD of every message
-- queued; when it wakes a waiter, ZREM and the notice; and, once in 32
-- order numbers, an HSET and an HDEL of bodies' '#wide' (below). A key of
-- another type fails the push with WRONGTYPE before anything is written:
-- the read fails on waiters, the first write on info, and the first
-- write to bodies (of '#wide' or of the first body), which takes back the
-- order number, on bodies; a write that fails on pushes or on queue has
-- the bodies, push tokens and the order number this run wrote taken back
-- first.

-- #include lib.lua
-- #include wake.lua

local notify = ARGV[1]
local now = now_ms()
local first = live_waiter(now)
local count = (#ARGV - 1) / 5
local seq = redis.call('HINCRBY', info, 'seq', count) - count

-- another tells whether the body of id, found there, is another push's:
-- with no push token, id was minted for this push.
local function another(id, token)
	return token ~= '' and redis.pcall('HGET', pushes, id) ~= token
end

-- write_body writes the body of id, and its push token when its caller
-- gave it: 1 when it wrote them, 0 when the body was there, or the error
-- of a write, which leaves nothing of this id's written.
local function write_body(id, token, payload)
	if token == '' then
		return redis.pcall('HSET', bodies, id, payload)
	end
	local added = redis.pcall('HSETNX', bodies, id, payload)
	if added == 1 then
		local set = redis.pcall('HSET', pushes, id, token)
		if type(set) == 'table' then
			redis.call('HDEL', bodies, id)
			return set
		end
	end
	return added
end

-- failed is the error of a write that failed, and wrote the ids of the
-- bodies this run wrote before it, to take back.
local failed, wrote

-- A push whose order numbers pass a multiple of 32 (the queue may hold
-- 32 messages or more since it was last empty) writes, before the
-- bodies, a field '#wide' whose value is longer than Redis keeps in a
-- small hash's compact encoding (64 bytes by default), and deletes it
-- after them: bodies is so made a hash table, which Redis never turns
-- back while the key exists, and each read and write of a field costs the
-- same however many messages it holds, where the compact encoding is
-- scanned field by field. A small queue, as a lone caller's, pays nothing.
local wide = math.floor((seq + count) / 32) > math.floor(seq / 32)
if wide then
	local set = redis.pcall('HSET', bodies, '#wide', string.rep('#', 65))
	if type(set) == 'table' then
		failed, wrote = set, {}
	end
end
if failed then
	-- bodies holds another type: nothing but seq was written.
elseif count == 1 then
	-- One message, the common case, without the tables of a batch.
	local id, token = ARGV[2], ARGV[3]
	local added = write_body(id, token, ARGV[4])
	if wide then
		redis.call('HDEL', bodies, '#wide')
	end
	if added == 0 then
		if another(id, token) then
			return {1, 0, 1}
		end
		return {1, 0}
	elseif added ~= 1 then
		failed, wrote = added, {}
	else
		local due = ARGV[6] + 0
		if due == 0 then
			due = now + ARGV[5]
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
	local ids, add, earliest, out = {}, {}, nil, {1, 0}
	for k = 2, #ARGV, 5 do
		local id, token = ARGV[k], ARGV[k + 1]
		seq = seq + 1
		local added = write_body(id, token, ARGV[k + 2])
		if type(added) == 'table' then
			failed = added
			break
		end
		if added == 1 then
			ids[#ids + 1] = id
			local due = tonumber(ARGV[k + 4])
			if due == 0 then
				due = now + tonumber(ARGV[k + 3])
			end
			add[#add + 1] = due
			if seq < 8e13 then
				add[#add + 1] = (seq + 1e13) .. ' ' .. id
			else
				add[#add + 1] = string.format('b%016d %s', seq, id)
			end
			earliest = math.min(earliest or due, due)
		elseif another(id, token) then
			out[#out + 1] = (k + 3) / 5
		end
	end
	if wide then
		redis.call('HDEL', bodies, '#wide')
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
		out[2] = #ids
		return out
	end
	wrote = ids
end

-- A write failed: take back the bodies, the push tokens and the order
-- numbers this run wrote, and fail with its error.
if #wrote > 0 then
	redis.call('HDEL', bodies, unpack(wrote))
	redis.pcall('HDEL', pushes, unpack(wrote))
end
if redis.call('HINCRBY', info, 'seq', -count) <= 0 then
	redis.call('HDEL', info, 'seq')
end
return failed
