-- claim: a waiter handed the lock by an unlock (see hand_off.lua) takes it
-- until the deadline its notice stated.
--
-- KEYS[1]  the lock: a string holding the owner's token, with a PX expiry,
--          marked ('+' after it) when others wait (see unlock.lua)
-- ARGV[1]  the waiter's token
-- ARGV[2]  the deadline the notice stated (ms)
--
-- Returns a status alone: 1 when the waiter holds the lock, else 0: a lock
-- whose claim time ran out before the claim is gone, and a claim never
-- takes it back. A claim sent again answers as its first run did: the lock
-- then holds the waiter's token until the deadline, which PEXPIREAT ... GT
-- leaves as it is.

local lock, token, deadline = KEYS[1], ARGV[1], ARGV[2]

local held = redis.call('GET', lock)
if held ~= token and held ~= token .. '+' then
	return 0
end
redis.call('PEXPIREAT', lock, deadline, 'GT')
return 1
