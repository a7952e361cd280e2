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
-- The steps are gcra.lua's, which allow_all.lua runs rule by rule, written
-- out here for the one key: TIME, GET, and SET when the events are
-- counted, with no helper defined per call. left is the room before the
-- TAT runs a full burst ahead of now, tau - (tat - now); n fits when n×cost
-- is at most left (gcra_fits), and counting moves the TAT and left by
-- n×cost (gcra_count). Every figure is an integer below 2^53, so exact.
--
-- A call carries no identity, so a re-sent call (its reply lost) runs
-- again as a new one: it counts only if the TAT its first run left, plus
-- n×cost, is still within tau of now, so no run takes the key past its
-- burst.

local key = KEYS[1]
local cost, tau, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]

local tat = redis.call('GET', key)
if not tat then
	tat = now
elseif string.find(tat, '^%d+$') then
	tat = tonumber(tat)
	if tat < now then
		tat = now
	end
else
	return redis.error_reply('ERR the key holds a string that is not a GCRA time')
end

local left = tau - (tat - now)
if n * cost <= left then
	if n > 0 then
		-- Kept until it has passed: PX rounded up to the ms.
		tat = tat + n * cost
		left = left - n * cost
		redis.call('SET', key, string.format('%d', tat), 'PX', math.ceil((tat - now) / 1000))
	end
	return {1, math.floor(left / cost), 0, tat - now}
end
-- Refused: n waits until its new TAT is a full burst ahead, or never (-1)
-- when n×cost is more than a full burst.
local remaining = 0
if left > 0 then
	remaining = math.floor(left / cost)
end
if n * cost > tau then
	return {0, remaining, -1, tat - now}
end
return {0, remaining, n * cost - left, tat - now}
