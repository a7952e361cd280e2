-- release: free a holder's units, take it out of the waiting queue, and hand
-- the freed units to waiting callers.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
-- KEYS[3]  full marker for this limit: see acquire.lua; deleted, as units are freed
-- KEYS[4]  queue: sorted set, waiting holder -> arrival number
-- KEYS[5]  queue deadlines: sorted set, waiting holder -> when its entry lapses (ms)
-- KEYS[6]  queue wants: hash, waiting holder -> 'n:lease ms'
-- ARGV[1]  holder ID
-- ARGV[2]  limit, in units
-- ARGV[3]  '1' for fair mode: hand units out strictly in arrival order
-- ARGV[4]  notice channel
-- ARGV[5]  notice command: 'publish', 'spublish' or ''
-- ARGV[6]  claim time, ms: how long a handed lease waits for its waiter
--
-- Returns 1 when the holder held a live lease, else 0. Releasing twice is
-- harmless. Units freed go at once to the waiters queued first whose wants
-- fit (in fair mode, only while the first in line fits), so no slot sits
-- idle while a waiter learns that it is free. Each gets a lease that lasts
-- the claim time (at most its lease time), and a notice
-- '+deadline ms:units in use:arrival number:holder' tells its process, where
-- the waiter claims the lease by renewing it to its full time. The arrival
-- number names the queue entry served, so that a late notice is never taken
-- for a later wait of the same holder. A waiter that died
-- while queued thus holds units only until the claim time has passed.

-- #include lib.lua

local leases, weights, full = KEYS[1], KEYS[2], KEYS[3]
local queue, qdeadlines, qwants = KEYS[4], KEYS[5], KEYS[6]
local holder = ARGV[1]

-- Lapsed leases go first, so that the holder's lease, if it is still
-- there, is live.
local now = now_ms()
local extra = prune(leases, weights, extra_units(weights), now)
local live
if extra == 0 then
	live = redis.call('ZREM', leases, holder) == 1
else
	live = redis.call('ZSCORE', leases, holder) ~= false
	if live then
		extra = set_weight(weights, extra, holder, weight_of(weights, extra, holder), 0)
		redis.call('ZREM', leases, holder)
	end
end
if live then
	redis.call('DEL', full)
end
if redis.call('EXISTS', queue) == 0 then
	if live then
		return 1
	end
	return 0
end
local left = redis.call('ZREM', queue, holder)
if left == 1 then
	redis.call('ZREM', qdeadlines, holder)
	redis.call('HDEL', qwants, holder)
end
if not live and left == 0 then
	return 0
end

-- Hand out the free units. Each waiter wants at least one, so a batch of
-- as many waiters as free units is read at a time; waiters passed over
-- (wanting too much, in unfair mode) are counted in skipped, and at most
-- 100 queue entries are read in all.
prune_queue(queue, qdeadlines, qwants, now)
local free = tonumber(ARGV[2]) - redis.call('ZCARD', leases) - extra
local fair = ARGV[3] == '1'
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
		local n = wanted_units(want)
		local old = 0
		local held = redis.call('ZSCORE', leases, waiter)
		if held then
			old = weight_of(weights, extra, waiter)
		end
		if not want then
			-- An entry without its wants (evicted?) is dropped, not served.
			leave_queue(queue, qdeadlines, qwants, waiter)
		elseif n - old <= free then
			-- A lease the waiter holds already is never shortened.
			local until_ms = math.max(tonumber(held or 0),
				now + math.min(tonumber(string.match(want, ':(%d+)$')), tonumber(ARGV[6])))
			local arrival = redis.call('ZSCORE', queue, waiter)
			redis.call('ZADD', leases, until_ms, waiter)
			extra = set_weight(weights, extra, waiter, old, n)
			leave_queue(queue, qdeadlines, qwants, waiter)
			free = free - (n - old)
			handed = true
			local units = tonumber(ARGV[2]) - free
			notify(ARGV[5], ARGV[4], string.format('+%d:%d:%d:', until_ms, units, tonumber(arrival)) .. waiter)
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
