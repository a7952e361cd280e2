-- claim: a waiter handed a slot by a release (see release.lua) takes it
-- until the deadline its notice stated, its full lease time.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms)
-- ARGV[1]  holder ID
-- ARGV[2]  the deadline the notice stated (ms)
--
-- Returns 1 when the holder holds a live lease, which now lasts until the
-- deadline (a later one is kept), else 0: a slot whose claim time ran
-- out, or that was released already, is gone, and a claim never takes it
-- back. A claim sent again answers as its first run did.

local leases, holder, deadline = KEYS[1], ARGV[1], ARGV[2]

local held = redis.call('ZSCORE', leases, holder)
local t = redis.call('TIME')
if not held or tonumber(held) <= t[1] * 1000 + math.floor(t[2] / 1000) then
	return 0
end
redis.call('ZADD', leases, 'GT', deadline, holder)
redis.call('PEXPIREAT', leases, deadline, 'GT')
return 1
