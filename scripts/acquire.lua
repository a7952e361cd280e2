-- acquire: take n units for a holder, or renew (and re-weigh) the lease it holds.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
-- KEYS[3]  full marker for this limit: a string that lives while every unit
--          is held, until the earliest lease lapses
-- KEYS[4]  queue: sorted set, waiting holder -> arrival number
-- KEYS[5]  queue deadlines: sorted set, waiting holder -> when its entry lapses (ms)
-- KEYS[6]  queue wants: hash, waiting holder -> 'n:lease ms'; '' -> last arrival number
-- ARGV[1]  holder ID
-- ARGV[2]  limit, in units
-- ARGV[3]  lease time, ms
-- ARGV[4]  n: units wanted, 1 <= n <= limit
-- ARGV[5]  '1' for fair mode: units go to waiters in arrival order
-- ARGV[6]  '1' to join the queue when refused (a waiting caller)
-- ARGV[7]  queue entry lease, ms: a waiter that stops trying leaves the queue then
--
-- KEYS[4..6] and ARGV[5..7] are passed only in fair mode or by a waiting
-- caller; without them the queue is neither read nor joined.
--
-- Returns {acquired (0|1), units in use, deadline ms, retry-after ms, units held,
-- arrival number}; the arrival number names the caller's queue entry, 0 when
-- it is not queued, and a release's notice names it too. A refusal by the
-- full marker returns instead a negative number, -(retry-after ms), and
-- means that all limit units are in use and the caller holds none.
-- A holder keeps one lease: asking again renews it, and a new n re-weighs it
-- if the difference fits; a refused re-weigh leaves the old lease as it was.
-- Retry-after is the time until the earliest lease lapses, 0 when none will.
-- A waiting caller that is refused joins the queue, from which a release
-- may hand it units directly (see release.lua).
-- The first write comes after the first read of KEYS[1], so a key of another
-- type fails with WRONGTYPE before anything is written.
--
-- The full marker makes the commonest call at a full key, a refusal, cheap:
-- two reads, before the helpers of lib.lua are even defined. Its name
-- carries the limit. It is set when the units in use reach the limit, for
-- as long as the earliest lease has to run, and deleted when this limit's
-- callers free units (release, shrink), or find it wrong. So while it lives,
-- the leases are those that were there when it was set, renewed or joined
-- by others since: all units are in use, and none lapses before it
-- expires. A holder's own lease is looked up, since asking again renews
-- it. A marker that says too much can only refuse, never admit.

local leases, weights, full = KEYS[1], KEYS[2], KEYS[3]
local holder = ARGV[1]
local join = ARGV[6] == '1'

local marked = 0
if not join then
	marked = redis.call('PTTL', full)
	if marked > 0 and not redis.call('ZSCORE', leases, holder) then
		return -marked
	end
end

-- #include lib.lua

local queue, qdeadlines, qwants = KEYS[4], KEYS[5], KEYS[6]
local limit, ttl, n = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local fair = ARGV[5] == '1'

-- mark_if_full sets the full marker when a grant leaves units at the limit.
local function mark_if_full(units, now)
	if units == limit then
		redis.call('SET', full, 1, 'PX', string.format('%d', earliest(leases) - now))
	end
end

local now = now_ms()
local extra = prune(leases, weights, extra_units(weights), now)
local card = redis.call('ZCARD', leases)
local units = card + extra

-- The common call: one unit, no weighted holder, no queue to mind, and a
-- free unit, so it is granted whether or not holder holds one already.
if n == 1 and extra == 0 and not fair and not join and units < limit then
	local deadline = now + ttl
	units = units + redis.call('ZADD', leases, deadline, holder)
	expire_after(leases, deadline, card == 0)
	if marked > 0 then
		-- Set for another count of units, by callers with another limit.
		redis.call('DEL', full)
	end
	mark_if_full(units, now)
	return {1, units, deadline, 0, 1, 0}
end

local old = 0
if redis.call('ZSCORE', leases, holder) then
	old = weight_of(weights, extra, holder)
end
local free = limit - units + old
local granted = n <= old or n <= free

-- A queued caller that is granted leaves the queue. In fair mode the units
-- must also cover every waiter queued ahead.
local queued = false
if fair or join then
	prune_queue(queue, qdeadlines, qwants, now)
	local rank = redis.call('ZRANK', queue, holder)
	queued = rank ~= false and rank ~= nil
	if fair and granted and n > old then
		local ahead = rank
		if not queued then
			ahead = redis.call('ZCARD', queue)
		end
		local i = 0
		while granted and i < ahead do
			local batch = redis.call('ZRANGE', queue, i, math.min(i + 999, ahead - 1))
			for _, want in ipairs(redis.call('HMGET', qwants, unpack(batch))) do
				free = free - wanted_units(want)
			end
			granted = n <= free
			i = i + #batch
		end
	end
end

if granted then
	if n ~= old or marked > 0 then
		redis.call('DEL', full)
	end
	local deadline = now + ttl
	redis.call('ZADD', leases, deadline, holder)
	extra = set_weight(weights, extra, holder, old, n)
	if old > 0 or extra > 0 then
		expire_with_last_lease(leases, weights, extra)
	else
		expire_after(leases, deadline, card == 0)
	end
	if queued then
		leave_queue(queue, qdeadlines, qwants, holder)
	end
	units = units - old + n
	mark_if_full(units, now)
	return {1, units, deadline, 0, n, 0}
end

local arrival = 0
if join then
	local qttl = tonumber(ARGV[7])
	if queued then
		arrival = tonumber(redis.call('ZSCORE', queue, holder))
	else
		arrival = redis.call('HINCRBY', qwants, '', 1)
		redis.call('ZADD', queue, arrival, holder)
	end
	redis.call('HSET', qwants, holder, string.format('%d:%d', n, ttl))
	redis.call('ZADD', qdeadlines, now + qttl, holder)
	redis.call('PEXPIRE', queue, qttl)
	redis.call('PEXPIRE', qdeadlines, qttl)
	redis.call('PEXPIRE', qwants, qttl)
end

local retry = 0
local first = earliest(leases)
if first then
	retry = first - now
	if marked <= 0 and units == limit then
		redis.call('SET', full, 1, 'PX', string.format('%d', retry))
	end
end
return {0, units, 0, retry, old, arrival}
