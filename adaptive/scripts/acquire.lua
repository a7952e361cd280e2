-- acquire: take a slot for a holder if the slots in use are below the
-- shared limit; otherwise, for a waiter, join the waiting queue or keep
-- its place in it, so that a release can hand it a slot (see release.lua).
--
-- KEYS[1]  state: hash, see lib.lua
-- KEYS[2]  leases: sorted set, holder -> lease deadline (ms)
-- KEYS[3]  queue: sorted set, waiting holder -> arrival number
-- KEYS[4]  queue deadlines: sorted set, waiting holder -> when its entry lapses (ms)
-- KEYS[5]  queue wants: hash, waiting holder -> '1:lease ms'; '' -> last arrival number
-- ARGV[1]  holder ID, new for each acquire
-- ARGV[2]  'min max initial': the limit's bounds, and its value for a new key
-- ARGV[3]  lease time, ms
-- ARGV[4]  '1' to join the queue when refused (a waiting caller), else '0'
-- ARGV[5]  queue entry lease, ms: a waiter that stops trying leaves the queue then
--
-- Returns {1, lease deadline ms, in use, limit, granted ms} when the
-- holder holds a slot: it took one, granted now, or finds one it holds
-- already (a slot a release handed it, whose notice it missed, or the one
-- this call's first run took, when go-redis sent it again), whose lease
-- then runs for the lease time from now, or longer if it did. Such a slot
-- was granted before now, at a time the leases do not keep, so granted is
-- then 0, unknown: its drop counts nothing (see release.lua), as a slot
-- granted before a decrease that ran since must not. Otherwise {0, ms until the
-- first lease lapses, in use, limit, now ms, arrival number}, the arrival
-- number naming the waiter's queue entry (0: not queued), which a
-- release's notice names too; a call sent again keeps the same entry.
--
-- A slot is taken only while in use < limit, so the slots held never
-- exceed the limit, and once a decrease put the limit below the slots in
-- use, none is taken until enough are freed. A new key's limit is written
-- as initial, so that every instance starts from the same one.

-- #include lib.lua

local state, leases = KEYS[1], KEYS[2]
local queue, qdeadlines, qwants = KEYS[3], KEYS[4], KEYS[5]
local holder, ttl, join, qttl = ARGV[1], tonumber(ARGV[3]), ARGV[4] == '1', tonumber(ARGV[5])
local min, max, initial = bounds(ARGV[2])

local now = now_ms()
local limit, stored = read_limit(state, min, max, initial)
if not stored then
	redis.call('HSET', state, 'limit', limit)
	redis.call('PEXPIRE', state, STATE_TTL)
end
local used = in_use(leases, now)

-- #include queue.lua

local held = tonumber(redis.call('ZSCORE', leases, holder))
if held or used < limit then
	local deadline = math.max(held or 0, now + ttl)
	redis.call('ZADD', leases, deadline, holder)
	expire_with_last_lease(leases)
	leave_queue(queue, qdeadlines, qwants, holder)
	if held then
		return {1, deadline, used, limit, 0}
	end
	return {1, deadline, used + 1, limit, now}
end

local arrival = 0
if join then
	prune_queue(queue, qdeadlines, qwants, now)
	arrival = join_queue(queue, qdeadlines, qwants, holder, '1:' .. ttl, now, qttl)
end
local first = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')[2]
local lapse = 0
if first then
	lapse = tonumber(first) - now
end
return {0, lapse, used, limit, now, arrival}
