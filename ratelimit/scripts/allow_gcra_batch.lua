-- allow_gcra_batch: allow_gcra.lua for several calls at once, each of the
-- same n events on the same GCRA limit and key, decided in turn as if
-- each had been sent alone, one after the other, at the same moment.
--
-- KEYS[1]  the limit's data key, as in allow_gcra.lua
-- ARGV[1]  share: one call's n events' share of the period, whole µs, as
--          allow_gcra.lua's ARGV[1]
-- ARGV[2]  tau: a full burst's share, whole µs
-- ARGV[3]  n, each call's events, 0 to 2^53; 0 asks without counting
-- ARGV[4]  den: the denominator of an event's share, 1 when it is whole
-- ARGV[5]  the share's remainder past ARGV[1], in 1/den µs (0 when den is 1)
-- ARGV[6]  tau's remainder past ARGV[2], in 1/den µs (0 when den is 1)
-- ARGV[7]  calls, the number of calls, 1 or more
-- KEYS[2]  optional: the rate record beside the user's key (see record.go),
--          set to ARGV[8] with an expiry of ARGV[9] ms before anything else
--
-- Returns {admitted, the status: how many of the calls, the first ones,
-- were allowed (each counting its n events); lead, the TAT's lead over
-- now before the first call, whole µs; lead's remainder, in 1/den µs;
-- den}. Call i (from 1) up to admitted leaves the lead at lead + i×share,
-- and each later one, refused, finds it at lead + admitted×share: the
-- caller, who knows the limit, builds each call's allow_gcra.lua reply
-- from these and divides it as that script's.
--
-- The steps are gcra.lua's, with one TIME, one GET and at most one SET
-- for the batch: the calls, in turn, read the TAT the one before left,
-- which the script carries instead of writing it back. A call is allowed
-- when lead + share is at most tau (gcra_fits), and counting moves the TAT
-- by share (gcra_add); a refusal moves nothing, so the calls after the
-- first refused one meet the same TAT and are refused too, and the loop
-- stops there. The last TAT counted is written once, kept until it has
-- passed, exactly as the last of the calls alone would have left it. The
-- key is read before any write, so a key of another kind fails every call
-- with an error and is left as it was, as each call alone would fail.
--
-- The calls carry no identity, so a re-sent batch (its reply lost) runs
-- again as new calls, each counted against what the first run counted,
-- as a re-sent allow_gcra.lua is: no run takes the key past its burst.

local key = KEYS[1]
if KEYS[2] then
	redis.call('SET', KEYS[2], ARGV[#ARGV - 1], 'PX', ARGV[#ARGV])
end
local r = {share = tonumber(ARGV[1]), tau = tonumber(ARGV[2]), n = tonumber(ARGV[3]),
	den = tonumber(ARGV[4]), share_rem = tonumber(ARGV[5]), tau_rem = tonumber(ARGV[6])}
local calls = tonumber(ARGV[7])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

-- #include gcra.lua

r.tat, r.rem = gcra_tat(key, now, r.den)
if not r.tat then
	return redis.error_reply('ERR the key holds a string that is not a GCRA time')
end
local lead, lead_rem = r.tat - now, r.rem

local admitted = 0
while admitted < calls and gcra_fits(r, now) do
	r.tat, r.rem = gcra_add(r.tat, r.rem, r.share, r.share_rem, r.den)
	admitted = admitted + 1
end
if admitted > 0 and r.n > 0 then
	gcra_write(key, r, now)
end
return {admitted, lead, lead_rem, r.den}
