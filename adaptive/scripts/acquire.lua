-- acquire: for each of one or more holders, in turn, take a slot if the
-- slots in use are below the shared limit; otherwise, for a waiter, join
-- the waiting queue or keep its place in it, so that a release can hand
-- it a slot (see release.lua). Concurrent tries on one Limiter share one
-- run (see scripts.go); each holder is answered as its try alone, made in
-- turn at this moment, would be.
--
-- KEYS[1]  state: hash, see lib.lua
-- KEYS[2]  leases: sorted set, holder -> lease deadline (ms)
-- KEYS[3]  queue: sorted set, waiting holder -> arrival number
-- KEYS[4]  queue deadlines: sorted set, waiting holder -> when its entry lapses (ms)
-- KEYS[5]  queue wants: hash, waiting holder -> '1:lease ms'; '' -> last arrival number
-- ARGV[1]  'min max initial': the limit's bounds, and its value for a new key
-- ARGV[2]  lease time, ms
-- ARGV[3]  queue entry lease, ms: a waiter that stops trying leaves the queue then
-- ARGV[4], ARGV[5], and so on in pairs, one pair per holder:
--          the holder ID, new for each acquire;
--          '1' to join the queue when refused (a waiting caller), else '0'
--
-- Returns {1, then one reply per holder, in order}. A holder's reply is
-- {1, lease deadline ms, in use, limit, granted ms} when it holds a slot:
-- it took one, granted now, or finds one it holds already (a slot a
-- release handed it, whose notice it missed, or the one this try's first
-- run took, when go-redis sent it again), whose lease then runs for the
-- lease time from now, or longer if it did. Such a slot was granted before
-- now, at a time the leases do not keep, so granted is then 0, unknown:
-- its drop counts nothing (see release.lua), as a slot granted before a
-- decrease that ran since must not. Otherwise it is {0, ms until the first
-- lease lapses, in use, limit, now ms, arrival number}, the arrival number
-- naming the waiter's queue entry (0: not queued), which a release's
-- notice names too; a try sent again keeps the same entry. A run sent
-- again by go-redis thus answers each holder as its first run did, as a
-- lone try sent again does.
--
-- A slot is taken only while in use < limit, counted after each holder's
-- turn, so the slots held never exceed the limit, and once a decrease put
-- the limit below the slots in use, none is taken until enough are freed.
-- A new key's limit is written as initial, so that every instance starts
-- from the same one.

-- #include lib.lua

local state, leases = KEYS[1], KEYS[2]
local queue, qdeadlines, qwants = KEYS[3], KEYS[4], KEYS[5]
local min, max, initial = bounds(ARGV[1])
local ttl, qttl = tonumber(ARGV[2]), tonumber(ARGV[3])

local now = now_ms()
local limit, stored = read_limit(state, min, max, initial)
if not stored then
	redis.call('HSET', state, 'limit', limit)
	redis.call('PEXPIRE', state, STATE_TTL)
end
local used = in_use(leases, now)

-- #include queue.lua

-- A holder that takes a slot leaves the queue; with no queue, it is in
-- none. A holder that joins makes one.
local queued = redis.call('EXISTS', queue) == 1
local took, pruned = false, false
local lapse -- ms until the first lease lapses; nil: to read

local reply = {1}
for i = 4, #ARGV, 2 do
	local holder, join = ARGV[i], ARGV[i + 1] == '1'
	local held = tonumber(redis.call('ZSCORE', leases, holder))
	if held or used < limit then
		local deadline = math.max(held or 0, now + ttl)
		redis.call('ZADD', leases, deadline, holder)
		took, lapse = true, nil
		if queued then
			leave_queue(queue, qdeadlines, qwants, holder)
		end
		if held then
			reply[#reply + 1] = {1, deadline, used, limit, 0}
		else
			used = used + 1
			reply[#reply + 1] = {1, deadline, used, limit, now}
		end
	else
		local arrival = 0
		if join then
			if not pruned then
				prune_queue(queue, qdeadlines, qwants, now)
				pruned = true
			end
			arrival = join_queue(queue, qdeadlines, qwants, holder, '1:' .. ttl, now, qttl)
			queued = true
		end
		if not lapse then
			local first = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')[2]
			lapse = first and tonumber(first) - now or 0
		end
		reply[#reply + 1] = {0, lapse, used, limit, now, arrival}
	end
end
if took then
	expire_with_last_lease(leases)
end
return reply
