-- acquire: take n units for each holder in turn, or renew (and re-weigh)
-- the lease a holder holds.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
-- KEYS[3]  full marker for this limit: a string that lives while every unit
--          is held, until the earliest lease lapses
-- KEYS[4]  queue: sorted set, waiting holder -> arrival number
-- KEYS[5]  queue deadlines: sorted set, waiting holder -> when its entry lapses (ms)
-- KEYS[6]  queue wants: hash, waiting holder -> 'n:lease ms:limit'; '' -> last arrival number
-- ARGV[1]  limit, in units
-- ARGV[2]  lease time, ms
-- ARGV[3]  n: units wanted, 1 <= n <= limit
-- then, only with KEYS[4..6] (fair mode, or a waiting caller):
-- ARGV[4]  '1' for fair mode: units go to waiters in arrival order
-- ARGV[5]  '1' to join the queue when refused (a waiting caller, one holder)
-- ARGV[6]  queue entry lease, ms: a waiter that stops trying leaves the queue then
-- then the holder IDs, one or more.
--
-- Each holder's outcome is exactly that of a call for it alone, made in
-- turn. A holder keeps one lease: asking again renews it, never to a
-- deadline earlier than it has (a Limiter with a longer lease time may
-- have given it), and a new n re-weighs it if the difference fits; a
-- refused re-weigh leaves the old lease as it was. Retry-after is the time until the earliest lease lapses,
-- 0 when none will. A waiting caller that is refused joins the queue, from
-- which a release may hand it units directly (see release.lua).
--
-- Returns one of:
--   -(retry-after ms), a number below zero: the full marker refused the
--     one holder; all limit units are in use and it holds none;
--   {deadline ms, u, x, ...}, u and x repeated per holder, for a call of
--     several holders (n = 1, no queue joined), and for a call of one
--     holder that takes the path of the commonest calls below: u is the
--     units in use after the holder's call, when granted (so u >= 1), or
--     -1 - units in use when refused; x is then the retry-after ms. When
--     granted, the holder's lease lapses at deadline, or at x when x is
--     not 0: a lease that ran longer already keeps its deadline;
--   {acquired (0|1), units in use, deadline ms, retry-after ms, units held,
--     arrival number} for any other call of one holder. The arrival number
--     names the caller's queue entry, 0 when it is not queued; a release's
--     notice names it too.
-- The first write comes after the first read of KEYS[1], so a key of another
-- type fails with WRONGTYPE before anything is written.
--
-- The full marker makes the commonest call at a full key, a refusal, cheap:
-- two reads, before the helpers of lib.lua are even defined. Its name
-- carries the limit. It is set when the units in use reach the limit, to
-- expire when the earliest lease lapses, and deleted when this limit's
-- callers free units (release, shrink), find it wrong,
-- or renew a lease (renew.lua). So while it lives, the leases are those
-- that were there when it was set, joined by others since: all units are
-- in use, and none lapses before it expires. A holder's own lease is
-- looked up, since asking again renews it. A marker that says too much can
-- only refuse, never admit. Callers with another limit do not delete this
-- limit's marker: while Limiters with different limits share a key, units
-- they free may go unseen by this limit's refusals until the marker lapses.

local leases, weights, full = KEYS[1], KEYS[2], KEYS[3]
local queued_call = KEYS[4] ~= nil
local join = queued_call and ARGV[5] == '1'
local first_holder = 4
if queued_call then
	first_holder = 7
end
local single = ARGV[first_holder + 1] == nil

local marked = 0
if single and not join then
	marked = redis.call('PTTL', full)
	if marked > 0 and not redis.call('ZSCORE', leases, ARGV[first_holder]) then
		return -marked
	end
end

local limit, ttl, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local fair = queued_call and ARGV[4] == '1'

local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local deadline = now + ttl
local extra = tonumber(redis.call('HGET', weights, '') or 0)

-- The commonest calls, one unit each, with no weighted holder and no queue
-- to mind, take a path of their own: a unit is granted while one is free,
-- or to a holder that holds one already. It comes before lib.lua, whose
-- helpers cost a little to define on every call, so it reads the clock
-- (as now_ms), prunes and sets the expiry (as expire_after) itself.
if n == 1 and extra == 0 and not fair and not join then
	redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
	local card = redis.call('ZCARD', leases)
	local units = card
	-- The earliest lease, read when first needed: its deadline, and its
	-- holder, whose renewal makes it unknown again.
	local first, first_of
	local function earliest()
		if not first then
			local lease = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
			first, first_of = tonumber(lease[2]), lease[1]
		end
		return first
	end
	local reply = {deadline}
	local granted = false
	for i = first_holder, #ARGV do
		local holder = ARGV[i]
		local held = units >= limit and redis.call('ZSCORE', leases, holder)
		if units < limit or held then
			-- GT: a lease that runs longer already keeps its deadline.
			local added = redis.call('ZADD', leases, 'GT', deadline, holder)
			units = units + added
			granted = true
			local kept = 0
			if added == 0 then
				kept = tonumber(held or redis.call('ZSCORE', leases, holder))
				if kept <= deadline then
					kept = 0
				end
			end
			if holder == first_of then
				first, first_of = nil, nil
			elseif added == 1 and first and deadline < first then
				first, first_of = deadline, holder
			end
			reply[#reply + 1] = units
			reply[#reply + 1] = kept
		else
			reply[#reply + 1] = -1 - units
			reply[#reply + 1] = earliest() - now
		end
	end
	if granted then
		if card == 0 then
			redis.call('PEXPIREAT', leases, string.format('%d', deadline))
		else
			redis.call('PEXPIREAT', leases, string.format('%d', deadline), 'GT')
		end
	end
	if units == limit then
		redis.call('SET', full, 1, 'PXAT', string.format('%d', earliest()))
	elseif marked > 0 or not single then
		-- A marker for this limit says too much: callers with another
		-- limit set it, or freed units since.
		redis.call('DEL', full)
	end
	return reply
end

-- #include lib.lua

local queue, qdeadlines, qwants = KEYS[4], KEYS[5], KEYS[6]
extra = prune(leases, weights, extra, now)

-- acquire_one runs the call for one holder and returns its outcome as the
-- one-holder reply above.
local function acquire_one(holder)
	local card = redis.call('ZCARD', leases)
	local units = card + extra
	local old = 0
	local held = redis.call('ZSCORE', leases, holder)
	if held then
		old = weight_of(weights, extra, holder)
	end
	local free = limit - units + old
	local granted = n <= old or n <= free

	-- A queued caller that is granted leaves the queue. In fair mode the
	-- units must also cover every waiter queued ahead.
	local queued = false
	if queued_call then
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
		-- A lease that runs longer already keeps its deadline.
		local until_ms = deadline
		if held then
			until_ms = math.max(deadline, tonumber(held))
		end
		redis.call('ZADD', leases, until_ms, holder)
		extra = set_weight(weights, extra, holder, old, n)
		if old > 0 or extra > 0 then
			expire_with_last_lease(leases, weights, extra)
		else
			expire_after(leases, until_ms, card == 0)
		end
		if queued then
			leave_queue(queue, qdeadlines, qwants, holder)
		end
		units = units - old + n
		if units == limit then
			redis.call('SET', full, 1, 'PXAT', string.format('%d', earliest(leases)))
		end
		return {1, units, until_ms, 0, n, 0}
	end

	local arrival = 0
	if join then
		local qttl = tonumber(ARGV[6])
		if queued then
			arrival = tonumber(redis.call('ZSCORE', queue, holder))
		else
			arrival = redis.call('HINCRBY', qwants, '', 1)
			redis.call('ZADD', queue, arrival, holder)
		end
		redis.call('HSET', qwants, holder, string.format('%d:%d:%d', n, ttl, limit))
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
			redis.call('SET', full, 1, 'PXAT', string.format('%d', first))
		end
	end
	return {0, units, 0, retry, old, arrival}
end

if single then
	return acquire_one(ARGV[first_holder])
end
local reply = {deadline}
for i = first_holder, #ARGV do
	local outcome = acquire_one(ARGV[i])
	if outcome[1] == 1 then
		reply[#reply + 1] = outcome[2]
	else
		reply[#reply + 1] = -1 - outcome[2]
	end
	reply[#reply + 1] = outcome[4]
end
return reply
