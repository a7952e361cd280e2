-- inspect: the lock's owner, the time left on its lease and the number of
-- its waiters, read at one moment, for operators and tools. Writes nothing.
--
-- KEYS[1]  the lock: a string holding the owner's token, with a PX expiry,
--          marked ('+' after it) once someone waits (see unlock.lua)
-- KEYS[2]  queue deadlines: sorted set, waiting token -> when its entry lapses (ms)
--
-- Returns {held, token, ms left, waiters, server clock µs}: held is 1 when
-- an owner holds the lock, else 0, and the token is then ''; the token is
-- the owner's without the mark a waiter may have put after it (see
-- unlock.lua); ms left is PTTL's reply, -1 when the key has no expiry
-- (a client set it without one) and -2 when the lock is free; waiters
-- counts the queue entries that have not lapsed. The server's clock is
-- read as a fence is (see obtain.go), so every owner that takes the lock
-- after this call gets a higher fence. GET fails a key of another type
-- with WRONGTYPE.

local lock, qdeadlines = KEYS[1], KEYS[2]

local t = redis.call('TIME')
local token = redis.call('GET', lock) or ''
if #token == 27 and string.find(token, '^[A-Z2-7]+%+$') then
	token = string.sub(token, 1, 26) -- the owner's token, without its mark
end
local left = redis.call('PTTL', lock)
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local waiters = redis.call('ZCOUNT', qdeadlines, '(' .. now, '+inf')
local held = 0
if token ~= '' then
	held = 1
end
return {held, token, left, waiters, t[1] * 1000000 + t[2]}
