-- lib: helpers shared by the lease scripts, included where a script has its
-- "-- #include lib.lua" line (see scripts.go).
--
-- The slots of one Limiter live in keys of one hash slot:
--   leases   sorted set, holder -> lease deadline (ms, server time)
--   weights  hash, holder -> weight for holders of more than one unit, and
--            field '' -> the sum of their extra units (weight - 1). Holder
--            IDs are never empty, so '' cannot clash with one.
-- Units in use = ZCARD(leases) + extra. Units are Lua numbers, exact up to
-- 2^53, which bounds the limit; numbers become text with '%d', since Redis
-- prints a Lua number with 14 digits at most. With no weighted holder the weights
-- hash does not exist, and the unweighted path touches nothing else.
--
-- Callers that wait queue in three more keys of the same slot:
--   queue      sorted set, holder -> arrival number
--   deadlines  sorted set, holder -> when the entry lapses unless refreshed (ms)
--   wants      hash, holder -> 'n:lease ms:limit', the units, lease time and
--              limit of the waiter, and '' -> the last arrival number

local function now_ms()
	local t = redis.call('TIME')
	return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function extra_units(weights)
	return tonumber(redis.call('HGET', weights, '') or 0)
end

local function weight_of(weights, extra, holder)
	if extra == 0 then
		return 1
	end
	return tonumber(redis.call('HGET', weights, holder) or 1)
end

-- set_weight records holder's weight going from old to new (0: none) and
-- returns the new sum of extra units.
local function set_weight(weights, extra, holder, old, new)
	if old == new then
		return extra
	end
	if new > 1 then
		redis.call('HSET', weights, holder, new)
	elseif old > 1 then
		redis.call('HDEL', weights, holder)
	end
	local delta = math.max(new - 1, 0) - math.max(old - 1, 0)
	if delta == 0 then
		return extra
	end
	extra = extra + delta
	if extra > 0 then
		redis.call('HSET', weights, '', extra)
	else
		redis.call('HDEL', weights, '')
	end
	return extra
end

-- prune drops lapsed leases (live while now < deadline) and returns the new
-- extra sum. With no weighted holder it is one command that reads nothing
-- unless a lease has lapsed.
local function prune(leases, weights, extra, now)
	if extra > 0 then
		for _, holder in ipairs(redis.call('ZRANGEBYSCORE', leases, '-inf', now)) do
			extra = set_weight(weights, extra, holder, weight_of(weights, extra, holder), 0)
		end
	end
	redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
	return extra
end

-- earliest returns the earliest lease deadline, or nil when there is none.
local function earliest(leases)
	return tonumber(redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')[2])
end

-- expire_with_last_lease makes the keys lapse with their last lease, so an
-- idle key costs nothing.
local function expire_with_last_lease(leases, weights, extra)
	local last = redis.call('ZRANGE', leases, -1, -1, 'WITHSCORES')
	if last[2] then
		-- A score may read back as "1.7e+12"; PEXPIREAT wants digits.
		local at = string.format('%d', tonumber(last[2]))
		redis.call('PEXPIREAT', leases, at)
		if extra > 0 then
			redis.call('PEXPIREAT', weights, at)
		end
	end
end

-- expire_after makes the leases key last at least until the deadline at,
-- with one command and no read, after a lease was added or extended to
-- at. The key keeps a later expiry (GT); a key just created has none yet.
-- A lease released or shrunk may leave the key a later expiry than its
-- last lease: it lapses then, still by itself.
local function expire_after(leases, at, created)
	if created then
		redis.call('PEXPIREAT', leases, string.format('%d', at))
	else
		redis.call('PEXPIREAT', leases, string.format('%d', at), 'GT')
	end
end

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

-- wanted_units reads n from a wants entry, 'n:lease ms:limit'.
local function wanted_units(want)
	return tonumber(string.match(want or '1', '^%d+'))
end

-- wanted reads a wants entry: n, the lease time in ms, and the waiter's
-- limit, nil in an entry written without it.
local function wanted(want)
	local n, lease, limit = string.match(want, '^(%d+):(%d+):?(%d*)$')
	return tonumber(n), tonumber(lease), tonumber(limit)
end

-- notify sends a notice to waiting processes: command is 'publish',
-- 'spublish' (Redis Cluster) or '' for none.
local function notify(command, channel, message)
	if command ~= '' then
		redis.call(command, channel, message)
	end
end
