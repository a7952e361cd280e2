-- allow_gcra: count n events against a GCRA limit if all of them fit now.
--
-- KEYS[1]  the limit's data key, this package's name beside the user's
--          key ("{k}/ratelimit", "{t}:k:ratelimit"): its TAT on the
--          server's clock, kept until it has passed (see gcra.lua)
-- ARGV[1]  share: the n events' share of the period (n×Period/Rate), whole
--          µs; above tau when n is above Burst, so that it never fits
-- ARGV[2]  tau: a full burst's share (Burst×Period/Rate), whole µs
-- ARGV[3]  n, the events asked for, 0 to 2^53; 0 asks without counting
-- ARGV[4]  den, only when an event's share (Period/Rate, in lowest terms)
--          is not a whole number of µs: its denominator, at most 2^53
-- ARGV[5]  with ARGV[4]: the share's remainder past ARGV[1], in 1/den µs
-- ARGV[6]  with ARGV[4]: tau's remainder past ARGV[2], in 1/den µs
-- KEYS[2]  optional: the rate record beside the user's key (see record.go),
--          set to ARGV[7] with an expiry of ARGV[8] ms before anything else;
--          ARGV[4] to ARGV[6] are then always given
--
-- Returns {allowed (0|1), the status; lead, the TAT's lead over now after
-- the call (0 when it has passed), whole µs; lead's remainder, in 1/den
-- µs; den (1 without ARGV[4])}: the caller, who knows the limit, divides
-- them into what remains and how long to wait. A refusal writes nothing
-- (but the record, when given),
-- and the key is read before any write, so a key of another kind fails
-- with an error and is left as it was.
--
-- The steps are gcra.lua's, which allow_all.lua runs rule by rule, written
-- out here for the one key: TIME, GET, and SET when the events are
-- counted, with no helper defined per call. Every time is a whole number
-- of µs and a remainder in 1/den µs below den: the n events fit when lead
-- + share is at most tau (gcra_fits), and counting them moves the TAT, and
-- lead, by share (gcra_count). Each figure is an integer below 2^53, so
-- exact, and a remainder is carried without passing den; so n events at
-- Rate per Period move the TAT by exactly n×Period/Rate, and the limit
-- keeps its rate exactly, whether or not a share is a whole µs.
--
-- A call carries no identity, so a re-sent call (its reply lost) runs
-- again as a new one: it counts only if the TAT its first run left, plus
-- share, is still within tau of now, so no run takes the key past its
-- burst.

local key = KEYS[1]
if KEYS[2] then
	redis.call('SET', KEYS[2], ARGV[#ARGV - 1], 'PX', ARGV[#ARGV])
end
local share, tau, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local den, share_rem, tau_rem = 1, 0, 0
if ARGV[4] then
	den, share_rem, tau_rem = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
end
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]

-- The TAT is tat + rem/den µs, at least now: the key's integer, or its
-- integer and a remainder in 1/d µs, below d. A remainder kept in another
-- den (a limit of another rate on the key) is rounded up to the next µs.
-- The layout this den writes most is tried first.
local tat, rem = now, 0
local value = redis.call('GET', key)
if value then
	local whole, r, d
	if den == 1 and string.find(value, '^%d+$') then
		whole = value
	else
		whole, r, d = string.match(value, '^(%d+)%+(%d+)/(%d+)$')
		if whole then
			r, d = tonumber(r), d == ARGV[4] and den or tonumber(d)
		elseif string.find(value, '^%d+$') then
			whole = value
		end
		if not whole or r and r >= d then
			return redis.error_reply('ERR the key holds a string that is not a GCRA time')
		end
	end
	whole = tonumber(whole)
	if whole >= now then
		tat = whole
		if r and d == den then
			rem = r
		elseif r and r > 0 then
			tat = whole + 1
		end
	end
end

-- lead + share, the remainder carried without passing den.
local lead, lead_rem = tat - now, rem
local after, after_rem = lead + share, 0
if share_rem >= den - lead_rem then
	after, after_rem = after + 1, share_rem - (den - lead_rem)
else
	after_rem = lead_rem + share_rem
end
if after > tau or after == tau and after_rem > tau_rem then
	return {0, lead, lead_rem, den}
end
if n > 0 then
	lead, lead_rem = after, after_rem
	local v
	if lead_rem > 0 then
		v = string.format('%d+%d/%d', now + lead, lead_rem, den)
		after = after + 1
	else
		v = string.format('%d', now + lead)
	end
	-- Kept until it has passed: PX is the lead rounded up to the ms.
	redis.call('SET', key, v, 'PX', math.ceil(after / 1000))
end
return {1, lead, lead_rem, den}
