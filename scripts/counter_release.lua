-- counter_release: give back one unit of a plain integer counter, never going
-- below 0, once however often the call is sent. The layout of the classic
-- DECR script, and a short-lived record of the call beside it.
--
-- KEYS[1]  the counter: a string holding an integer
-- KEYS[2]  this call's record: a string beside the counter, named by a
--          random ID the caller drew for the call before its first send
-- ARGV[1]  how long the record lives, ms
--
-- Returns 1 when a unit was given back, 0 when the counter was already 0 or
-- gone.
--
-- The counter says nothing of who holds its units, so a release sent twice
-- (the client sends a call again when its reply was lost) would give back
-- someone else's unit. The record makes it once: the first run writes its
-- answer in the record with NX before it decrements, so a second run finds
-- the record, answers what the first did, and writes nothing; a call that
-- fails with an error writes no record and decrements nothing. A second
-- run after the record has lapsed would give back a second unit; ARGV[1]
-- outlasts any client's retries.

local key, record = KEYS[1], KEYS[2]

local value = redis.call('GET', key)
local count = tonumber(value or '0')
if not count then
	return redis.error_reply('ERR value is not an integer')
end
local answer = 0
if count > 0 then
	answer = 1
end
if not redis.call('SET', record, answer, 'PX', ARGV[1], 'NX') then
	return tonumber(redis.call('GET', record))
end
if answer == 1 then
	redis.call('DECR', key)
end
return answer
