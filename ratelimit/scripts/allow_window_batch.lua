-- allow_window_batch: allow_window.lua for several calls at once, each of
-- the same n events on the same fixed window and key, decided in turn as
-- if each had been sent alone, one after the other, at the same moment.
--
-- KEYS[1]  the limit's key: the window's count (see window.lua)
-- ARGV[1]  the window, ms
-- ARGV[2]  the rate: the most events per window
-- ARGV[3]  n, each call's events, 0 to 2^53; 0 asks without counting
-- ARGV[4]  calls, the number of calls, 1 or more
-- KEYS[2]  optional: the rate record beside the user's key (see record.go),
--          set to ARGV[5] with an expiry of ARGV[6] ms before anything else
--
-- Returns {admitted, the status: how many of the calls, the first ones,
-- were allowed (each counting its n events); left, the rate less the
-- count before the first call; ttl, the window's PTTL in ms after the
-- batch, -2 when there is no count}. Call i (from 1) up to admitted
-- leaves left - i×n remaining; each later one, refused, finds
-- left - admitted×n (at least 0) and waits for the window's end, or for
-- ever when n is above the rate: allow_window.lua's answers, which the
-- caller builds from these.
--
-- The steps are allow_window.lua's read-first path, with one GET, one
-- PTTL and one INCRBY for the batch: the calls, in turn, see the count
-- the one before left, which the script carries instead of writing it
-- back. A call fits when n <= rate - count (window_fits), and counting
-- adds n; a refusal adds nothing, so the calls after the first refused
-- one meet the same count and are refused too, and the loop stops there.
-- The admitted calls' events, admitted×n, at most the rate less the count
-- before, so exact, are added at once, the first starting the window, as
-- the first of the calls alone would have. A count found without an
-- expiry gets the window as one, as each call alone does. A key of another
-- kind, or a string that is no count, fails every call with an error and
-- is left as it was, as each call alone would fail.
--
-- The calls carry no identity, so a re-sent batch (its reply lost) runs
-- again as new calls, each counted against what the first run counted,
-- as a re-sent allow_window.lua is: no run takes the count past the rate.

local key = KEYS[1]
if KEYS[2] then
	redis.call('SET', KEYS[2], ARGV[#ARGV - 1], 'PX', ARGV[#ARGV])
end
local window, rate, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local calls = tonumber(ARGV[4])

-- #include window.lua

local count, ttl = window_read(key)
if not count then
	return redis.error_reply('ERR the key holds a string that is not a count')
end
ttl = window_repair(key, window, ttl)
local left = rate - count

local admitted, after = 0, count
while admitted < calls and window_fits(after, n, rate) do
	after = after + n
	admitted = admitted + 1
end
if admitted > 0 and n > 0 then
	local _
	_, ttl = window_count(key, window, string.format('%d', admitted * n), ttl)
end
return {admitted, left, ttl}
