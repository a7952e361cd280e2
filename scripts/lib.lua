-- lib: helpers shared by the lease scripts, included where a script has its
-- "-- #include lib.lua" line (see scripts.go), after the early returns of
-- its commonest calls, so that those do not pay for defining them.
--
-- The slots of one Limiter live in keys of one hash slot:
--   leases   sorted set, holder -> lease deadline (ms, server time)
--   weights  hash, holder -> weight for holders of more than one unit, and
--            field '' -> the sum of their extra units (weight - 1). Holder
--            IDs are never empty, so '' cannot clash with one.
-- Units in use = ZCARD(leases) + extra. Units are Lua numbers, exact up to
-- 2^53, which bounds the limit; numbers become text with '%d', since Redis
-- prints a Lua number with 14 digits at most. With no weighted holder the
-- weights hash does not exist, and the unweighted path touches nothing else.
-- A lease is live while now < deadline.

local function now_ms()
	local t = redis.call('TIME')
	return t[1] * 1000 + math.floor(t[2] / 1000)
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

-- holding returns the units in use, holder's lease deadline (false when
-- it holds none) and the units it holds (0 when none).
local function holding(leases, weights, extra, holder)
	local units = redis.call('ZCARD', leases) + extra
	local held = redis.call('ZSCORE', leases, holder)
	local old = 0
	if held then
		old = weight_of(weights, extra, holder)
	end
	return units, held, old
end

-- set_weight records holder's weight going from old to new (0: none) and
-- returns the new sum of extra units.
local function set_weight(weights, extra, holder, old, new)
	if new > 1 and new ~= old then
		redis.call('HSET', weights, holder, new)
	elseif new <= 1 and old > 1 then
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

-- prune drops lapsed leases and returns the new extra sum. With no weighted
-- holder it is one command that reads nothing unless a lease has lapsed.
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

-- retry_after returns the ms until the earliest lease lapses, 0 when none will.
local function retry_after(leases, now)
	local first = earliest(leases)
	if first then
		return first - now
	end
	return 0
end

-- mark_full sets the full marker of limit when the units in use reach it,
-- to lapse with the earliest lease; otherwise it deletes the marker when
-- stale says it may be wrong.
local function mark_full(full, leases, units, limit, stale)
	if units >= limit then
		redis.call('SET', full, 1, 'PXAT', string.format('%d', earliest(leases)))
	elseif stale then
		redis.call('DEL', full)
	end
end

-- expire_after makes the leases key last at least until at (ms, as text),
-- with one command and no read, after a lease was added or extended to at.
-- The key keeps a later expiry (GT); a key just created has none yet. A
-- lease released or shrunk may leave the key a later expiry than its last
-- lease: it lapses then, still by itself.
local function expire_after(leases, at, created)
	if created then
		redis.call('PEXPIREAT', leases, at)
	else
		redis.call('PEXPIREAT', leases, at, 'GT')
	end
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

-- count_refused adds n refused calls to the refusal counter, when the
-- Limiter counts them (Config.CountRefusals passes the counter's key). The
-- count starts again a day after it began: the key expires then.
local function count_refused(counter, n)
	if counter and n > 0 and redis.call('INCRBY', counter, n) == n then
		redis.call('PEXPIRE', counter, 86400000)
	end
end
