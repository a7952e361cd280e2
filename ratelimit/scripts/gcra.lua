-- gcra.lua: GCRA on one key, for allow_all.lua, whose rules each run it;
-- allow_gcra.lua runs the same steps written out for its one key. Times
-- are µs on the server's clock. cost is one event's share of the period
-- (Period/Rate, rounded up); tau is a full burst's (Burst×cost).
--
-- The key holds the theoretical arrival time (TAT) as an integer string:
-- the moment by which every event counted so far has been paid for. The
-- key is back to its full allowance once the TAT has passed, and lapses
-- then.

-- gcra_tat returns the key's TAT, at least now, or nil when the key holds
-- a string that is not a TAT. GET fails with WRONGTYPE on another type.
local function gcra_tat(key, now)
	local value = redis.call('GET', key)
	if not value then
		return now
	end
	if not string.match(value, '^%d+$') then
		return nil
	end
	return math.max(tonumber(value), now)
end

-- gcra_fits reports whether n more events fit now: the new TAT is at most
-- a full burst ahead of now.
local function gcra_fits(tat, now, cost, tau, n)
	return tat + n * cost - now <= tau
end

-- gcra_count counts n events and returns the new TAT, kept until it has
-- passed (PX rounded up to the ms, so the key never lapses early).
local function gcra_count(key, tat, now, cost, n)
	tat = tat + n * cost
	redis.call('SET', key, string.format('%d', tat), 'PX', string.format('%d', math.ceil((tat - now) / 1000)))
	return tat
end

-- gcra_reply returns {allowed, remaining, retry after, reset after} for
-- the key at TAT tat. A refused n waits until its new TAT is a full burst
-- ahead, or never (-1) when n×cost is more than a full burst.
local function gcra_reply(tat, now, cost, tau, n, ok)
	local remaining = math.max(math.floor((tau - (tat - now)) / cost), 0)
	if ok then
		return {1, remaining, 0, tat - now}
	end
	if n * cost > tau then
		return {0, remaining, -1, tat - now}
	end
	return {0, remaining, tat + n * cost - tau - now, tat - now}
end
