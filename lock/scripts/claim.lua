-- claim: a waiter handed the lock by an unlock (see unlock.lua) takes it
-- until the deadline its notice stated.
--
-- KEYS[1]  the lock: a string holding the owner's token, with a PX expiry
-- ARGV[1]  the waiter's token
-- ARGV[2]  the deadline the notice stated (ms)
--
-- Returns 1 when the waiter holds the lock, else 0: a lock whose claim
-- time ran out before the claim is gone, and a claim never takes it back.

local lock, token, deadline = KEYS[1], ARGV[1], ARGV[2]

if redis.call('GET', lock) ~= token then
	return 0
end
redis.call('PEXPIREAT', lock, deadline, 'GT')
return 1
