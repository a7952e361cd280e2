-- acquire: take n units for a holder, or renew (and re-weigh) the lease it holds.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
-- KEYS[3]  queue: sorted set, waiting holder -> arrival number (fair mode)
-- KEYS[4]  queue deadlines: sorted set, waiting holder -> when its entry lapses (ms)
-- KEYS[5]  queue weights: hash, waiting holder -> n when n > 1; '' -> last arrival number
-- ARGV[1]  holder ID
-- ARGV[2]  limit, in units
-- ARGV[3]  lease time, ms
-- ARGV[4]  n: units wanted, 1 <= n <= limit
-- ARGV[5]  '1' for fair mode: waiters take units in arrival order
-- ARGV[6]  '1' to join the queue when refused (a waiting caller, fair mode)
-- ARGV[7]  queue entry lease, ms: a waiter that stops trying leaves the queue then
-- ARGV[8]  notice channel
-- ARGV[9]  notice command: 'publish', 'spublish' or ''
--
-- Returns {acquired (0|1), units in use, deadline ms, retry-after ms, units held}.
-- A holder keeps one lease: asking again renews it, and a new n re-weighs it
-- if the difference fits; a refused re-weigh leaves the old lease as it was.
-- Retry-after is the time until the earliest lease lapses, 0 when none will.
-- The first write comes after the first read of KEYS[1], so a key of another
-- type fails with WRONGTYPE before anything is written.

local leases, weights = KEYS[1], KEYS[2]
local queue, qdeadlines, qweights = KEYS[3], KEYS[4], KEYS[5]
local holder = ARGV[1]
local limit, ttl, n = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local fair = ARGV[5] == '1'

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

-- In fair mode the units must also cover every waiter queued ahead.
local queued = false
if fair then
	local gone = redis.call('ZRANGEBYSCORE', qdeadlines, '-inf', now)
	for _, h in ipairs(gone) do
		redis.call('ZREM', queue, h)
		redis.call('HDEL', qweights, h)
	end
	if #gone > 0 then
		redis.call('ZREMRANGEBYSCORE', qdeadlines, '-inf', now)
	end
	local rank = redis.call('ZRANK', queue, holder)
	queued = rank ~= false and rank ~= nil
	local ahead = rank
	if not queued then
		ahead = redis.call('ZCARD', queue)
	end
	if granted and n > old and ahead > 0 then
		-- Each waiter wants at least one unit; weigh them only if that fits.
		local want = n + ahead
		if want <= free and redis.call('HLEN', qweights) > 1 then
			local i = 0
			while want <= free and i < ahead do
				local batch = redis.call('ZRANGE', queue, i, math.min(i + 999, ahead - 1))
				for _, w in ipairs(redis.call('HMGET', qweights, unpack(batch))) do
					if w then
						want = want + tonumber(w) - 1
					end
				end
				i = i + #batch
			end
		end
		granted = want <= free
	end
end

if granted then
	local deadline = now + ttl
	redis.call('ZADD', leases, deadline, holder)
	extra = set_weight(weights, extra, holder, old, n)
	expire_with_last_lease(leases, weights, extra)
	if queued then
		redis.call('ZREM', queue, holder)
		redis.call('ZREM', qdeadlines, holder)
		redis.call('HDEL', qweights, holder)
	end
	if n < old then
		notify(ARGV[9], ARGV[8], old - n)
	end
	return {1, units - old + n, deadline, 0, n}
end

if fair and ARGV[6] == '1' then
	local qttl = tonumber(ARGV[7])
	if not queued then
		redis.call('ZADD', queue, redis.call('HINCRBY', qweights, '', 1), holder)
	end
	if n > 1 then
		redis.call('HSET', qweights, holder, n)
	else
		redis.call('HDEL', qweights, holder)
	end
	redis.call('ZADD', qdeadlines, now + qttl, holder)
	redis.call('PEXPIRE', queue, qttl)
	redis.call('PEXPIRE', qdeadlines, qttl)
	redis.call('PEXPIRE', qweights, qttl)
end

local retry = 0
if first[2] then
	retry = tonumber(first[2]) - now
end
return {0, units, 0, retry, old}
