-- allow_gcra: count n events against a GCRA limit if all of them fit now.
--
-- KEYS[1]  the limit's data key, this package's name beside the user's
--          key ("{k}/ratelimit", "{t}:k:ratelimit"): its TAT, µs on the
--          server's clock, as an integer string that lapses when it has
--          passed (see gcra.lua)
-- ARGV[1]  cost: one event's share of the period, µs
-- ARGV[2]  tau: a full burst's share, µs
-- ARGV[3]  n, the events asked for, 0 to 2^53; 0 asks without counting
--
-- Returns {allowed (0|1), the status; remaining; retry after µs (0 when
-- allowed, -1 when n never fits); reset after µs}. A refusal writes nothing, and the
-- key is read before any write, so a key of another kind fails with an
-- error and is left as it was.
--
-- A call carries no identity, so a re-sent call (its reply lost) runs
-- again as a new one: it counts only if the TAT its first run left, plus
-- n×cost, is still within tau of now, so no run takes the key past its
-- burst.

local key = KEYS[1]
local cost, tau, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

-- #include gcra.lua

local tat = gcra_tat(key, now)
if not tat then
	return redis.error_reply('ERR the key holds a string that is not a GCRA time')
end
local ok = gcra_fits(tat, now, cost, tau, n)
if ok and n > 0 then
	tat = gcra_count(key, tat, now, cost, n)
end
return gcra_reply(tat, now, cost, tau, n, ok)
