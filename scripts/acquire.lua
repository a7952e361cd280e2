-- acquire: take n units for each holder in turn if they are free, or renew
-- (and re-weigh) the lease a holder holds. Never waits, never queues.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
-- KEYS[3]  full marker for this limit: a string that lives while every unit
--          is held, until the earliest lease lapses
-- KEYS[4]  refusal counter, given only with Config.CountRefusals: an
--          integer, the refusals of this script and acquire_queued.lua's
--          tries that do not wait, for a day from the first (lib.lua)
-- ARGV[1]  limit, in units
-- ARGV[2]  lease time, ms
-- ARGV[3]  n: units wanted, 1 <= n <= limit
-- ARGV[4…] holder IDs, one or more
--
-- Returns -(retry-after ms), a number below zero, when the full marker
-- refused the one holder: all limit units are in use and it holds none.
-- That call is the commonest at a full key, and a list reply would add a
-- seventh to its cost on the server. Likewise the commonest grant, a new
-- lease of one unit for the one holder, returns the one number
-- u * 2^42 + x, above zero, with u and x as below (w is 1), while
-- u < 2^11 and x < 2^42 (until the year 2109): the sum is then below
-- 2^53, which a Lua number holds exactly, and its high bits are u, its
-- low 42 bits x. (Turning u into text for a string 'u:x' would cost
-- more than the list.) Otherwise it returns a list of, per holder in
-- turn, three numbers u, x, w:
--   u >= 1: granted; u is the units in use after the call, x the lease's
--           deadline (ms), w the units the holder holds (n);
--   u <= -1: refused; -1 - u is the units in use; x is the retry-after ms
--           (0 when no lease will lapse); w the units the holder still
--           holds from before (a refused re-weigh), else 0.
-- Each holder's outcome is exactly that of a call for it alone, made in
-- turn. A holder keeps one lease: asking again renews it, never to a
-- deadline earlier than it has (a Limiter with a longer lease time may
-- have given it), and a new n re-weighs it if the difference fits.
-- A Limiter in fair mode does not call this script (see acquire_queued.lua).
-- The first write comes after the first read of KEYS[1], so a key of
-- another type fails with WRONGTYPE before anything is written.
--
-- The full marker makes the commonest call at a full key, a refusal, two
-- reads. Its name carries the limit. It is set when the units in use reach
-- the limit, to expire when the earliest lease lapses, and deleted when this
-- limit's callers free units (release, shrink), find it wrong, or renew a
-- lease. So while it lives, all units are in use and none lapses before it
-- expires; a holder's own lease is looked up, since asking again renews it.
-- A marker that says too much can only refuse, never admit.

-- call is redis.call, looked up once for the commonest calls' commands.
local call = redis.call
local leases, weights, full = KEYS[1], KEYS[2], KEYS[3]
local single = ARGV[5] == nil

local marked = call('PTTL', full)
if marked > 0 and single and not call('ZSCORE', leases, ARGV[4]) then
	if KEYS[4] and call('INCR', KEYS[4]) == 1 then
		call('PEXPIRE', KEYS[4], 86400000) -- as count_refused, which lib.lua defines
	end
	return -marked
end

-- The commonest grant, one unit for one holder at a key with no weighted
-- holder and no full marker while a unit is free, also returns before
-- lib.lua's helpers are defined: five commands after those reads (TIME,
-- the prune, ZCARD, ZADD, PEXPIREAT), and a reply of one number. The
-- clock is kept as text, the seconds then the milliseconds' three digits,
-- since a number passed to redis.call is printed with "%.17g", which
-- costs more than the command. Anything else goes on below with the same
-- clock.
local clock
if single and marked <= 0 and ARGV[3] == '1' and not call('HGET', weights, '') then
	local t = call('TIME')
	clock = t[1] .. string.sub('00000' .. t[2], -6, -4)
	call('ZREMRANGEBYSCORE', leases, '-inf', clock)
	local card, limit = call('ZCARD', leases), tonumber(ARGV[1])
	if card < limit then
		local holder, deadline = ARGV[4], clock + ARGV[2]
		local at = string.format('%d', deadline)
		-- GT: a lease that runs longer already keeps its deadline.
		local added = call('ZADD', leases, 'GT', at, holder)
		if card == 0 then
			-- The key was just created and has no expiry, which GT keeps.
			call('PEXPIREAT', leases, at)
		else
			call('PEXPIREAT', leases, at, 'GT')
		end
		local units = card + added
		if units >= limit then
			-- As lib.lua's mark_full: to lapse with the earliest lease.
			local first = tonumber(call('ZRANGE', leases, 0, 0, 'WITHSCORES')[2])
			call('SET', full, 1, 'PXAT', string.format('%d', first))
		end
		if added == 1 and units < 2048 and deadline < 4398046511104 then
			return units * 4398046511104 + deadline -- u * 2^42 + x
		end
		-- A renewal, whose lease keeps the later deadline, as GT did, or a
		-- grant past the number's bounds.
		return {units, tonumber(call('ZSCORE', leases, holder)), 1}
	end
end

-- #include lib.lua

local limit, ttl, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local now = clock and tonumber(clock) or now_ms()
local deadline = now + ttl
local extra = prune(leases, weights, extra_units(weights), now)
local card = redis.call('ZCARD', leases)
local reply = {}
local refused = 0

-- A batch of one unit each, with no weighted holder, that the free units
-- cover whoever is new: every holder is granted, so one ZMSCORE tells who
-- holds a lease already, and one ZADD (GT, as below) adds or renews them
-- all. A holder named twice is new once; its second lease is its first,
-- renewed.
local count = #ARGV - 3
if n == 1 and extra == 0 and count > 1 and card + count <= limit then
	local at = string.format('%d', deadline)
	local scores = redis.call('ZMSCORE', leases, unpack(ARGV, 4))
	local members = {'GT'}
	local units, seen = card, {}
	for i = 1, count do
		local holder = ARGV[i + 3]
		members[2 * i], members[2 * i + 1] = at, holder
		local kept = deadline
		if scores[i] then
			kept = math.max(deadline, tonumber(scores[i]))
		elseif not seen[holder] then
			units = units + 1
		end
		seen[holder] = true
		reply[3 * i - 2], reply[3 * i - 1], reply[3 * i] = units, kept, 1
	end
	redis.call('ZADD', leases, unpack(members))
	expire_after(leases, at, card == 0)
	mark_full(full, leases, units, limit, true)
	return reply
end

-- The commonest calls, one unit each with no weighted holder, grant while a
-- unit is free or the holder holds one already, and read nothing else.
if n == 1 and extra == 0 then
	local units, granted = card, false
	local at = string.format('%d', deadline)
	for i = 4, #ARGV do
		local holder = ARGV[i]
		local held = units >= limit and redis.call('ZSCORE', leases, holder)
		if units < limit or held then
			-- GT: a lease that runs longer already keeps its deadline.
			local added = redis.call('ZADD', leases, 'GT', at, holder)
			units, granted = units + added, true
			local kept = deadline
			if added == 0 then
				kept = math.max(deadline, tonumber(held or redis.call('ZSCORE', leases, holder)))
			end
			reply[#reply + 1], reply[#reply + 2], reply[#reply + 3] = units, kept, 1
		else
			reply[#reply + 1], reply[#reply + 2], reply[#reply + 3] = -1 - units, retry_after(leases, now), 0
			refused = refused + 1
		end
	end
	if granted then
		expire_after(leases, at, card == 0)
	end
	mark_full(full, leases, units, limit, marked > 0 or not single)
	count_refused(KEYS[4], refused)
	return reply
end

for i = 4, #ARGV do
	local holder = ARGV[i]
	local units, held, old = holding(leases, weights, extra, holder)
	if n <= old or n - old <= limit - units then
		-- A lease that runs longer already keeps its deadline.
		local until_ms = math.max(deadline, tonumber(held or 0))
		redis.call('ZADD', leases, until_ms, holder)
		extra = set_weight(weights, extra, holder, old, n)
		expire_with_last_lease(leases, weights, extra)
		units = units - old + n
		mark_full(full, leases, units, limit, n ~= old or marked > 0)
		reply[#reply + 1], reply[#reply + 2], reply[#reply + 3] = units, until_ms, n
	else
		mark_full(full, leases, units, limit, false)
		reply[#reply + 1], reply[#reply + 2], reply[#reply + 3] = -1 - units, retry_after(leases, now), old
		refused = refused + 1
	end
end
count_refused(KEYS[4], refused)
return reply
