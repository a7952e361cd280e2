-- queue: helpers for the scripts that read the waiting queue, included
-- where a script has its "-- #include queue.lua" line, after lib.lua.
--
-- Callers that wait queue in three keys beside the leases, in their slot:
--   queue      sorted set, holder -> arrival number
--   deadlines  sorted set, holder -> when the entry lapses unless refreshed (ms)
--   wants      hash, holder -> 'n:lease ms:limit', the units, lease time and
--              limit of the waiter, and '' -> the last arrival number

-- prune_queue drops the entries of waiters that stopped refreshing them.
local function prune_queue(queue, deadlines, wants, now)
	local gone = redis.call('ZRANGEBYSCORE', deadlines, '-inf', now)
	for _, holder in ipairs(gone) do
		redis.call('ZREM', queue, holder)
		redis.call('HDEL', wants, holder)
	end
	if #gone > 0 then
		redis.call('ZREMRANGEBYSCORE', deadlines, '-inf', now)
	end
end

local function leave_queue(queue, deadlines, wants, holder)
	redis.call('ZREM', queue, holder)
	redis.call('ZREM', deadlines, holder)
	redis.call('HDEL', wants, holder)
end

-- wanted reads a wants entry: n, the lease time in ms, and the waiter's
-- limit, nil in an entry written without it.
local function wanted(want)
	local n, lease, limit = string.match(want, '^(%d+):(%d+):?(%d*)$')
	return tonumber(n), tonumber(lease), tonumber(limit)
end
