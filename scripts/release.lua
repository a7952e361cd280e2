-- release: free each holder's units in turn, take it out of the waiting
-- queue, and hand the freed units to waiting callers.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
-- KEYS[3]  full marker for this limit: see acquire.lua; deleted, as units are freed
-- KEYS[4]  queue: sorted set, waiting holder -> arrival number
-- KEYS[5]  queue deadlines: sorted set, waiting holder -> when its entry lapses (ms)
-- KEYS[6]  queue wants: hash, waiting holder -> 'n:lease ms:limit'
-- ARGV[1]  the Limiter's fixed arguments in one string (each string
--          passed costs the server as much as a short command's work):
--          'limit:fair:claim time:notice command:notice channel', where
--          limit is in units; fair is '1' for fair mode, handing units out
--          strictly in arrival order, else '0'; the claim time (ms) is how
--          long a handed lease waits for its waiter's claim; the notice
--          command is 'publish', 'spublish' or ''; the channel, last, may
--          hold ':'
-- ARGV[2…] pairs, one per holder in turn: the deadline (ms, server time)
--          the server gave the holder's lease, as its Lease knows it from
--          the replies that took or renewed it ('0' when the caller does
--          not know it), then the holder ID
--
-- Returns a string of one character per holder in turn, '1' when it held
-- a live lease, else '0': exactly what a release of that holder alone,
-- made in turn, returns. (A string costs the server far less than a list.)
-- Releasing twice frees and hands on nothing the second time.
--
-- A call sent again after its reply was lost answers as its first run
-- did, for each holder whose deadline is given: a lease lives until its deadline unless it
-- is released, and its deadline only grows, so a holder found gone while
-- the server's clock is still below the deadline its Lease was given was
-- freed by a release, which for a Lease that keeps its holder ID to itself
-- is this call's first run: '1'. At or past the deadline the lease may
-- have lapsed: '0'. The clock is read on the paths that read it anyway,
-- so this costs no command.
--
-- Units freed go at once to the waiters queued first whose wants fit (in
-- fair mode, only while the first in line fits), within both this limit
-- and the waiter's own, which its queue entry records, so no slot sits idle
-- while a waiter learns that it is free. A waiter handed units holds a
-- lease that lapses after the claim time (never shortening one it holds),
-- and a notice
-- '*now ms:held until ms:deadline ms:units in use:arrival number:holder'
-- tells its process (see internal/waitqueue): the lease is live through
-- 'held until' (its deadline less 1 ms), and the waiter, if the notice
-- comes while the lease must still be live for it, with time for a claim
-- to arrive, returns at once with 'deadline', its full lease time from now,
-- and claims the lease with claim.lua, which moves it to that deadline; a
-- waiter that reads the notice later tries again instead. The arrival
-- number names the queue entry served, so that a late notice is never
-- taken for a later wait of the same holder. A waiter that died while
-- queued thus holds units for the claim time at most.

-- call is redis.call, looked up once for the commonest calls' commands.
local call = redis.call
local leases, weights, full = KEYS[1], KEYS[2], KEYS[3]
local queue, qdeadlines, qwants = KEYS[4], KEYS[5], KEYS[6]

-- The commonest calls, with no weighted holder, no full marker and nobody
-- waiting, free the leases and touch nothing else, before any helper is
-- defined. Lapsed leases go first, so that a holder's lease, if it is
-- still there, is live. The clock is text, as in acquire.lua's commonest
-- grant, and becomes a number only for a holder not found.
if call('EXISTS', weights, full, queue) == 0 then
	local t = call('TIME')
	local clock = t[1] .. string.sub('00000' .. t[2], -6, -4)
	call('ZREMRANGEBYSCORE', leases, '-inf', clock)
	if ARGV[4] == nil then
		if call('ZREM', leases, ARGV[3]) == 1 or tonumber(clock) < tonumber(ARGV[2]) then
			return '1'
		end
		return '0'
	end
	local reply = {}
	for i = 2, #ARGV, 2 do
		local freed = call('ZREM', leases, ARGV[i + 1]) == 1 or tonumber(clock) < tonumber(ARGV[i])
		reply[#reply + 1] = freed and '1' or '0'
	end
	return table.concat(reply)
end

-- #include lib.lua
-- #include queue.lua

local limit, fair, claim, command, channel = string.match(ARGV[1], '^(%d+):([01]):(%d+):(%a*):(.*)$')
if not limit then
	return redis.error_reply('ERR release.lua: ARGV[1] is not limit:fair:claim:command:channel')
end
limit, fair, claim = tonumber(limit), fair == '1', tonumber(claim)
local now = now_ms()
local reply = {}

-- freed answers for a holder with no live lease at now: '1' only while
-- known, the deadline its Lease was given, has not come.
local function freed(known)
	return now < known and '1' or '0'
end

local extra = extra_units(weights)
local waiting = redis.call('EXISTS', queue) == 1

-- hand_out gives the free units to waiters. Each waiter wants at least
-- one, so a batch of as many waiters as free units is read at a time;
-- waiters passed over (wanting too much, in unfair mode) are counted in
-- skipped, and at most 100 queue entries are read in all.
local function hand_out()
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
				local until_ms = math.max(tonumber(held or 0), now + math.min(lease, claim))
				local arrival = redis.call('ZSCORE', queue, waiter)
				redis.call('ZADD', leases, until_ms, waiter)
				extra = set_weight(weights, extra, waiter, old, n)
				leave_queue(queue, qdeadlines, qwants, waiter)
				free = free - (n - old)
				handed = true
				local message = string.format('*%d:%d:%d:%d:%d:', now, until_ms - 1, math.max(until_ms, now + lease), limit - free, tonumber(arrival))
				if command ~= '' then
					redis.call(command, channel, message .. waiter)
				end
				if free <= 0 then
					break
				end
			elseif fair then
				return handed
			else
				skipped = skipped + 1
			end
		end
	end
	return handed
end

for i = 2, #ARGV, 2 do
	local holder = ARGV[i + 1]
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
	if waiting and (live or left == 1) and hand_out() then
		expire_with_last_lease(leases, weights, extra)
	end
	reply[#reply + 1] = live and '1' or freed(tonumber(ARGV[i]))
end
return table.concat(reply)
