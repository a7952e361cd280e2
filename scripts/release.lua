-- release: free each holder's units in turn, take it out of the waiting
-- queue, and hand the freed units to waiting callers.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
-- KEYS[3]  full marker for this limit: see acquire.lua; deleted, as units are freed
-- KEYS[4]  queue: sorted set, waiting holder -> arrival number
-- KEYS[5]  queue deadlines: sorted set, waiting holder -> when its entry lapses (ms)
-- KEYS[6]  queue wants: hash, waiting holder -> 'n:lease ms:limit'
-- ARGV[1]  limit, in units
-- ARGV[2]  '1' for fair mode: hand units out strictly in arrival order
-- ARGV[3]  notice channel
-- ARGV[4]  notice command: 'publish', 'spublish' or ''
-- ARGV[5]  claim time, ms: how long a handed lease waits for its waiter
-- ARGV[6…] holder IDs, one or more
--
-- Returns, for one holder, 1 when it held a live lease, else 0; for more,
-- a list of these, each exactly what a release of that holder alone, made
-- in turn, returns. Releasing twice is
-- harmless. Units freed go at once to the waiters queued first whose wants
-- fit (in fair mode, only while the first in line fits), within both this
-- limit and the waiter's own, which its queue entry records: while
-- Limiters with different limits share the key, no waiter is handed units
-- above its limit. So no slot sits
-- idle while a waiter learns that it is free. Each gets a lease that lasts
-- the claim time (at most its lease time), and a notice
-- '+deadline ms:units in use:arrival number:holder' tells its process, where
-- the waiter claims the lease by renewing it to its full time. The arrival
-- number names the queue entry served, so that a late notice is never taken
-- for a later wait of the same holder. A waiter that died
-- while queued thus holds units only until the claim time has passed.

local leases, weights, full = KEYS[1], KEYS[2], KEYS[3]
local queue, qdeadlines, qwants = KEYS[4], KEYS[5], KEYS[6]
local limit = tonumber(ARGV[1])
local first_holder = 6
local single = #ARGV == first_holder

local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local extra = tonumber(redis.call('HGET', weights, '') or 0)
local waiting = redis.call('EXISTS', queue) == 1

-- The commonest calls, with no weighted holder and nobody waiting, take a
-- path of their own, before lib.lua, whose helpers cost a little to define
-- on every call; so the clock is read above as now_ms would. Lapsed leases
-- go first, so that a holder's lease, if it is still there, is live.
if extra == 0 and not waiting then
	redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
	local reply, freed = {}, false
	for i = first_holder, #ARGV do
		reply[#reply + 1] = redis.call('ZREM', leases, ARGV[i])
		freed = freed or reply[#reply] == 1
	end
	if freed then
		redis.call('DEL', full)
	end
	if single then
		return reply[1]
	end
	return reply
end

-- #include lib.lua

local fair = ARGV[2] == '1'

-- release_one runs the call for one holder and returns its outcome.
local function release_one(holder)
	extra = prune(leases, weights, extra, now)
	local live = redis.call('ZSCORE', leases, holder) ~= false
	if live then
		extra = set_weight(weights, extra, holder, weight_of(weights, extra, holder), 0)
		redis.call('ZREM', leases, holder)
		redis.call('DEL', full)
	end
	local left = 0
	if waiting then
		left = redis.call('ZREM', queue, holder)
	end
	if left == 1 then
		redis.call('ZREM', qdeadlines, holder)
		redis.call('HDEL', qwants, holder)
	end
	if not waiting or (not live and left == 0) then
		if live then
			return 1
		end
		return 0
	end

	-- Hand out the free units. Each waiter wants at least one, so a batch of
	-- as many waiters as free units is read at a time; waiters passed over
	-- (wanting too much, in unfair mode) are counted in skipped, and at most
	-- 100 queue entries are read in all.
	prune_queue(queue, qdeadlines, qwants, now)
	local free = limit - redis.call('ZCARD', leases) - extra
	local handed = false
	local skipped, read = 0, 0
	while free > 0 and read < 100 do
		local batch = redis.call('ZRANGE', queue, skipped, skipped + math.min(free, 100 - read) - 1)
		if #batch == 0 then
			break
		end
		read = read + #batch
		local blocked = false
		for _, waiter in ipairs(batch) do
			local want = redis.call('HGET', qwants, waiter)
			local n, lease, waiter_limit = wanted(want or '1:0')
			-- The units this waiter may be handed: those free by this
			-- limit, and by its own.
			local room = free
			if waiter_limit then
				room = math.min(free, waiter_limit - (limit - free))
			end
			local old = 0
			local held = redis.call('ZSCORE', leases, waiter)
			if held then
				old = weight_of(weights, extra, waiter)
			end
			if not want then
				-- An entry without its wants (evicted?) is dropped, not served.
				leave_queue(queue, qdeadlines, qwants, waiter)
			elseif n - old <= room then
				-- A lease the waiter holds already is never shortened.
				local until_ms = math.max(tonumber(held or 0), now + math.min(lease, tonumber(ARGV[5])))
				local arrival = redis.call('ZSCORE', queue, waiter)
				redis.call('ZADD', leases, until_ms, waiter)
				extra = set_weight(weights, extra, waiter, old, n)
				leave_queue(queue, qdeadlines, qwants, waiter)
				free = free - (n - old)
				handed = true
				local units = limit - free
				notify(ARGV[4], ARGV[3], string.format('+%d:%d:%d:', until_ms, units, tonumber(arrival)) .. waiter)
				if free <= 0 then
					break
				end
			elseif fair then
				blocked = true
				break
			else
				skipped = skipped + 1
			end
		end
		if blocked then
			break
		end
	end
	if handed then
		expire_with_last_lease(leases, weights, extra)
	end
	if live then
		return 1
	end
	return 0
end

if single then
	return release_one(ARGV[first_holder])
end
local reply = {}
for i = first_holder, #ARGV do
	reply[#reply + 1] = release_one(ARGV[i])
end
return reply
