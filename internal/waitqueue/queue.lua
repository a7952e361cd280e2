-- queue: helpers for the scripts that keep a waiting queue, included where
-- a script has its "-- #include queue.lua" line. They need no other helper.
--
-- Callers that wait queue in three keys beside a primitive's own, in their
-- Redis Cluster hash slot:
--   queue      sorted set, waiter -> arrival number
--   deadlines  sorted set, waiter -> when the entry lapses unless refreshed (ms)
--   wants      hash, waiter -> what it waits for, as 'n:lease ms' or
--              'n:lease ms:limit' (units, lease time, and the waiter's limit
--              when it has one), and '' -> the last arrival number
-- Waiter names are never empty, so '' cannot clash with one. The three keys
-- lapse together when no waiter has refreshed its entry for a whole entry
-- lease, so an idle queue costs nothing.

-- prune_queue drops the entries of waiters that stopped refreshing them.
local function prune_queue(queue, deadlines, wants, now)
	local gone = redis.call('ZRANGEBYSCORE', deadlines, '-inf', now)
	for _, waiter in ipairs(gone) do
		redis.call('ZREM', queue, waiter)
		redis.call('HDEL', wants, waiter)
	end
	if #gone > 0 then
		redis.call('ZREMRANGEBYSCORE', deadlines, '-inf', now)
	end
end

local function leave_queue(queue, deadlines, wants, waiter)
	redis.call('ZREM', queue, waiter)
	redis.call('ZREM', deadlines, waiter)
	redis.call('HDEL', wants, waiter)
end

-- join_queue puts waiter at the back of the queue, or keeps its place when
-- it is queued already, records what it wants, and keeps its entry until
-- now + qttl ms. It returns the arrival number that names the entry.
local function join_queue(queue, deadlines, wants, waiter, want, now, qttl)
	local arrival = tonumber(redis.call('ZSCORE', queue, waiter))
	if not arrival then
		arrival = redis.call('HINCRBY', wants, '', 1)
		redis.call('ZADD', queue, arrival, waiter)
	end
	redis.call('HSET', wants, waiter, want)
	redis.call('ZADD', deadlines, now + qttl, waiter)
	redis.call('PEXPIRE', queue, qttl)
	redis.call('PEXPIRE', deadlines, qttl)
	redis.call('PEXPIRE', wants, qttl)
	return arrival
end

-- wanted reads a wants entry: n, the lease time in ms, and the waiter's
-- limit, nil in an entry written without it.
local function wanted(want)
	local n, lease, limit = string.match(want, '^(%d+):(%d+):?(%d*)$')
	return tonumber(n), tonumber(lease), tonumber(limit)
end
