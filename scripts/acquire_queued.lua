-- acquire_queued: take n units for one holder in queue order, or renew
-- (and re-weigh) its lease; when refused, join the waiting queue or keep
-- the holder's place in it. It serves every waiting acquire, and every
-- acquire in fair mode.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
-- KEYS[3]  full marker for this limit: see acquire.lua
-- KEYS[4]  queue: sorted set, waiting holder -> arrival number
-- KEYS[5]  queue deadlines: sorted set, waiting holder -> when its entry lapses (ms)
-- KEYS[6]  queue wants: hash, waiting holder -> 'n:lease ms:limit'; '' -> last arrival number
-- KEYS[7]  refusal counter, given only with Config.CountRefusals: see
--          acquire.lua; a refused holder that joins the queue waits, and
--          is not counted
-- ARGV[1]  limit, in units
-- ARGV[2]  lease time, ms
-- ARGV[3]  n: units wanted, 1 <= n <= limit
-- ARGV[4]  '1' for fair mode: units go to waiters in arrival order
-- ARGV[5]  '1' to join the queue when refused (a waiting caller)
-- ARGV[6]  queue entry lease, ms: a waiter that stops trying leaves the queue then
-- ARGV[7…] holder IDs, one or more
--
-- Returns, per holder in turn, four numbers u, x, w, arrival: u, x and w as
-- acquire.lua returns them, and the arrival number that names the holder's
-- queue entry, 0 when it is not queued; a release's notice names it too.
-- A call that joins the queue (ARGV[5] '1') adds, after the last holder's,
-- the server's clock in ms as it ran, by which each waiter judges how long
-- a release's notice can still be trusted (see internal/waitqueue).
-- Each holder's outcome is exactly that of a call for it alone, made in
-- turn. A holder that is granted leaves the queue. In fair mode, the units
-- must also cover every waiter queued ahead, or every waiter when the
-- holder is not queued.

-- #include lib.lua
-- #include queue.lua

local leases, weights, full = KEYS[1], KEYS[2], KEYS[3]
local queue, qdeadlines, qwants = KEYS[4], KEYS[5], KEYS[6]
local limit, ttl, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local fair, join, qttl = ARGV[4] == '1', ARGV[5] == '1', tonumber(ARGV[6])

local now = now_ms()
local extra = prune(leases, weights, extra_units(weights), now)
prune_queue(queue, qdeadlines, qwants, now)

-- The queue's first `scanned` entries want `scanned_wants` units in all.
-- A fair check reads on from there, and reads no further once the holder
-- no longer fits, so that the holders of one call read each entry once.
-- Entries that join go to the back, past them; a queued holder, which may
-- leave or change its wants, forgets them (see acquire_one).
local scanned, scanned_wants = 0, 0

-- fits reports whether n units fit in free once the first `ahead` queue
-- entries have theirs.
local function fits(ahead, free)
	if ahead < scanned then
		scanned, scanned_wants = 0, 0
	end
	while n <= free - scanned_wants and scanned < ahead do
		local batch = redis.call('ZRANGE', queue, scanned, math.min(scanned + 999, ahead - 1))
		for _, want in ipairs(redis.call('HMGET', qwants, unpack(batch))) do
			scanned_wants = scanned_wants + wanted(want or '1:0')
		end
		scanned = scanned + #batch
	end
	return n <= free - scanned_wants
end

local function acquire_one(holder)
	local units, held, old = holding(leases, weights, extra, holder)
	local free = limit - units + old
	local granted = n <= old or n <= free

	local rank = redis.call('ZRANK', queue, holder)
	local queued = rank ~= false and rank ~= nil
	if queued and rank < scanned then
		scanned, scanned_wants = 0, 0
	end
	if fair and granted and n > old then
		local ahead = rank
		if not queued then
			ahead = redis.call('ZCARD', queue)
		end
		granted = fits(ahead, free)
	end

	if granted then
		-- A lease that runs longer already keeps its deadline.
		local until_ms = math.max(now + ttl, tonumber(held or 0))
		redis.call('ZADD', leases, until_ms, holder)
		extra = set_weight(weights, extra, holder, old, n)
		expire_with_last_lease(leases, weights, extra)
		if queued then
			leave_queue(queue, qdeadlines, qwants, holder)
		end
		units = units - old + n
		mark_full(full, leases, units, limit, true)
		return units, until_ms, n, 0
	end

	local arrival = 0
	if join then
		arrival = join_queue(queue, qdeadlines, qwants, holder, string.format('%d:%d:%d', n, ttl, limit), now, qttl)
	end
	mark_full(full, leases, units, limit, false)
	return -1 - units, retry_after(leases, now), old, arrival
end

local reply = {}
local refused = 0
for i = 7, #ARGV do
	local u, x, w, arrival = acquire_one(ARGV[i])
	reply[#reply + 1], reply[#reply + 2], reply[#reply + 3], reply[#reply + 4] = u, x, w, arrival
	if u < 0 and not join then
		refused = refused + 1
	end
end
count_refused(KEYS[7], refused)
if join then
	reply[#reply + 1] = now
end
return reply
