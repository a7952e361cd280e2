-- renew: extend each holder's live lease to the lease time from now; a
-- lease that runs longer already (given by a Limiter with a longer lease
-- time) is kept.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
-- KEYS[3]  full marker for the renewing Limiter's limit: see acquire.lua;
--          deleted, since it was set to lapse with the earliest lease
-- ARGV[1]  lease time, ms
-- ARGV[2…] holder IDs, one or more
--
-- Returns {1, then per holder in turn its lease's new deadline in ms, or
-- 0 when it holds no live lease}: exactly what a renewal of that holder
-- alone, made in turn, returns, since a renewal touches no other lease.
-- A lapsed lease is never renewed: renewal does not re-acquire. A renewal
-- sent again renews again, to the lease time from its last run.

-- #include lib.lua

local leases, weights, ttl = KEYS[1], KEYS[2], tonumber(ARGV[1])
local reply = {1}
local now, last

for i = 2, #ARGV do
	local holder = ARGV[i]
	local deadline = redis.call('ZSCORE', leases, holder)
	if deadline then
		-- The clock is read once, when a lease is first found.
		now = now or now_ms()
		deadline = tonumber(deadline)
	end
	if deadline and deadline > now then
		deadline = math.max(deadline, now + ttl)
		redis.call('ZADD', leases, deadline, holder)
		last = math.max(last or 0, deadline)
		reply[#reply + 1] = deadline
	else
		reply[#reply + 1] = 0
	end
end

if last then
	expire_after(leases, string.format('%d', last), false)
	-- The weights, if any, lapse with the leases.
	redis.call('PEXPIREAT', weights, string.format('%d', last), 'GT')
	redis.call('DEL', KEYS[3])
end
return reply
