-- acquire: take n units for a holder, or renew (and re-weigh) the lease it holds.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
-- KEYS[3]  queue: sorted set, waiting holder -> arrival number
-- KEYS[4]  queue deadlines: sorted set, waiting holder -> when its entry lapses (ms)
-- KEYS[5]  queue wants: hash, waiting holder -> 'n:lease ms'; '' -> last arrival number
-- KEYS[6]  full marker: string, the units in use, set by a refusal for lack of
--          units and expiring when the earliest lease lapses
-- ARGV[1]  holder ID
-- ARGV[2]  limit, in units
-- ARGV[3]  lease time, ms
-- ARGV[4]  n: units wanted, 1 <= n <= limit
-- ARGV[5]  '1' for fair mode: units go to waiters in arrival order
-- ARGV[6]  '1' to join the queue when refused (a waiting caller)
-- ARGV[7]  queue entry lease, ms: a waiter that stops trying leaves the queue then
--
-- Returns {acquired (0|1), units in use, deadline ms, retry-after ms, units held,
-- arrival number}; the arrival number names the caller's queue entry, 0 when
-- it is not queued, and a release's notice names it too.
-- A holder keeps one lease: asking again renews it, and a new n re-weighs it
-- if the difference fits; a refused re-weigh leaves the old lease as it was.
-- Retry-after is the time until the earliest lease lapses, 0 when none will.
-- A waiting caller that is refused joins the queue, from which a release
-- may hand it units directly (see release.lua).
-- The first write comes after the first read of KEYS[1], so a key of another
-- type fails with WRONGTYPE before anything is written.
--
-- The full marker makes the commonest call at a full key, a refusal, cheap.
-- Every grant, release and shrink deletes it, and a refusal for lack of
-- units sets it. So while it lives, the leases are those that were there
-- when it was set, only renewed since: the units in use are as it says, and
-- none lapses before it expires. A caller that holds no lease and does not
-- queue is then refused without reading the clock. A marker that says too
-- much can only refuse, never admit.

local leases, weights = KEYS[1], KEYS[2]
local queue, qdeadlines, qwants, full = KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local holder = ARGV[1]
local limit, ttl, n = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local fair = ARGV[5] == '1'

if ARGV[6] ~= '1' then
	local marked = redis.call('GET', full)
	if marked and tonumber(marked) + n > limit and not redis.call('ZSCORE', leases, holder) then
		return {0, tonumber(marked), 0, redis.call('PTTL', full), 0, 0}
	end
end

local now = now_ms()
local extra = extra_units(weights)
local first
extra, first = prune(leases, weights, extra, now)

local old = 0
if redis.call('ZSCORE', leases, holder) then
	old = weight_of(weights, extra, holder)
end
local units = redis.call('ZCARD', leases) + extra
local free = limit - units + old
local granted = n <= old or n <= free

-- A queued caller that is granted leaves the queue. In fair mode the units
-- must also cover every waiter queued ahead.
local queued = false
if fair or ARGV[6] == '1' then
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
	redis.call('DEL', full)
	local deadline = now + ttl
	redis.call('ZADD', leases, deadline, holder)
	extra = set_weight(weights, extra, holder, old, n)
	expire_with_last_lease(leases, weights, extra)
	if queued then
		leave_queue(queue, qdeadlines, qwants, holder)
	end
	return {1, units - old + n, deadline, 0, n, 0}
end

local arrival = 0
if ARGV[6] == '1' then
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
if first[2] then
	retry = tonumber(first[2]) - now
	if n - old > limit - units then
		redis.call('SET', full, units, 'PX', retry)
	end
end
return {0, units, 0, retry, old, arrival}
