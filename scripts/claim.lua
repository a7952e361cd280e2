-- claim: a waiter handed a lease by a release (see release.lua) takes it
-- for its full lease time, which its notice stated.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
-- ARGV[1]  holder ID
-- ARGV[2]  the deadline the notice stated (ms)
--
-- Returns {1, the lease's deadline in ms}, or {0} when the holder holds no
-- live lease: a lease whose claim time ran out before the claim is gone, and a
-- claim never takes units back.

-- #include lib.lua

local leases, weights, holder, deadline = KEYS[1], KEYS[2], ARGV[1], ARGV[2]

local held = redis.call('ZSCORE', leases, holder)
if not held or tonumber(held) <= now_ms() then
	return {0}
end
redis.call('ZADD', leases, 'GT', deadline, holder)
expire_after(leases, deadline, false)
-- The weights, if any, lapse with the leases.
redis.call('PEXPIREAT', weights, deadline, 'GT')
return {1, math.max(tonumber(held), tonumber(deadline))}
