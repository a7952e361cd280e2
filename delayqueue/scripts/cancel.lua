-- cancel: delete messages that are ready or delayed, for good, once
-- however often the call is sent.
--
-- KEYS[1..8]  the queue's eight keys (see lib.lua)
-- KEYS[9]     this call's record: a string beside the queue, named by a
--             token the caller drew for the call before its first send
-- ARGV[1]     how long the record lives, ms
-- ARGV[2..]   the ids
--
-- Returns {1, how many of the ids were ready or delayed, and were deleted
-- with their bodies and push tokens}. A message in flight is left alone
-- and not counted, so that its consumer's ack, nack or extend acts on it
-- as ever; so is a dead letter (drop deletes those).
--
-- The first run writes its count in the record, so a run of the same call
-- sent again after its reply was lost finds the record, answers what the
-- first run did and writes nothing. A second run after the record lapsed
-- would count only what is still there; ARGV[1] outlasts any client's
-- retries of one call.
--
-- An id with no body is not queued. An id whose body is there is ready,
-- delayed, in flight or dead: dead when it is in dead, in flight when a
-- lease names it, else queued. Nothing indexes a queued message's entry
-- by its id (the entry begins with its order key, see lib.lua), so the
-- queue's entries are read in pages of 512, earliest due first, until
-- every queued id is found: a cancel costs a read of the queue up to the
-- last message it deletes. A queue left without messages leaves no keys
-- but the record.

-- #include lib.lua
-- #include give.lua

local err = check_types()
if err then
	return err
end
local record = KEYS[9]
local done = redis.call('GET', record)
if done then
	return {1, tonumber(done)}
end

-- wanted: the ids with a body that are not dead letters, each once.
local wanted, left = {}, 0
for i = 2, #ARGV do
	local id = ARGV[i]
	if not wanted[id] and redis.call('HGET', bodies, id) and not redis.call('ZSCORE', dead, id) then
		wanted[id] = true
		left = left + 1
	end
end
-- Those a lease names are in flight.
if left > 0 then
	for _, held in ipairs(redis.call('ZRANGE', leases, 0, -1)) do
		local id = string.match(held, '^%S+ (.*)$')
		if wanted[id] then
			wanted[id] = nil
			left = left - 1
		end
	end
end
local cancelled, page, start = 0, 512, 0
while left > 0 do
	local entries = redis.call('ZRANGE', queue, start, start + page - 1)
	local gone = {}
	for _, e in ipairs(entries) do
		local id = string.match(e, '^%S+ (%S+)')
		if wanted[id] then
			wanted[id] = nil
			left = left - 1
			gone[#gone + 1] = e
			redis.call('HDEL', bodies, id)
			redis.call('HDEL', pushes, id)
		end
	end
	if #gone > 0 then
		redis.call('ZREM', queue, unpack(gone))
		cancelled = cancelled + #gone
	end
	if #entries < page then
		break
	end
	start = start + page - #gone
end
drop_if_empty()
redis.call('SET', record, cancelled, 'PX', ARGV[1])
return {1, cancelled}
