-- lib: helpers shared by the scripts of an adaptive limit, included where a
-- script has its "-- #include lib.lua" line (see scripts.go).
--
-- The keys of one limit live in one Redis Cluster hash slot:
--   state   hash: 'limit' -> the shared limit; 'down' and 'up' -> when it
--           last went down and up (ms, the server's clock); 'delay' and
--           'peak' -> the time from grant to drop (ms) of the last drop
--           that counted, and the limit before it; with a tolerance,
--           the latency estimate: 'rtt' (us), 'rttsum', 'rttn', 'rttat',
--           'rttmin', 'rttprev', 'rttminat' (see release.lua)
--   leases  sorted set, holder -> lease deadline (ms, the server's clock)
-- A lease is live while now < deadline; the slots in use are ZCARD(leases)
-- once lapsed leases are pruned. The state lapses after a day that no
-- release touched it (StateTTL), and the leases with their last lease, so
-- an idle limit costs nothing.
--
-- Every caller passes its bounds as 'min max initial'; the limit read is
-- the stored one, or initial when there is none, kept within min and max.

-- STATE_TTL is how long the state outlives the last release that touched
-- it, in ms: a day.
local STATE_TTL = 86400000

-- HANDED_BASE packs the slots in use and the limit into a hand-off
-- notice's one value: in use × HANDED_BASE + limit (see release.lua).
local HANDED_BASE = 67108864

local function now_ms()
	local t = redis.call('TIME')
	return t[1] * 1000 + math.floor(t[2] / 1000)
end

local function bounds(arg)
	local min, max, initial = string.match(arg, '^(%d+) (%d+) (%d+)$')
	return tonumber(min), tonumber(max), tonumber(initial)
end

-- read_limit returns the limit within min and max, and whether the state
-- holds one.
local function read_limit(state, min, max, initial)
	local stored = tonumber(redis.call('HGET', state, 'limit'))
	local limit = stored or initial
	return math.max(min, math.min(max, limit)), stored ~= nil
end

-- read_state returns the state, for a script that moves the limit: the
-- limit, within min and max (initial when none is stored), when it last
-- went down and up (ms; 0: never), and the drop delay and the peak of the
-- last drop that counted (0: none).
local function read_state(state, min, max, initial)
	local f = redis.call('HMGET', state, 'limit', 'down', 'up', 'delay', 'peak')
	return math.max(min, math.min(max, tonumber(f[1]) or initial)),
		tonumber(f[2]) or 0, tonumber(f[3]) or 0, tonumber(f[4]) or 0, tonumber(f[5]) or 0
end

-- in_use drops lapsed leases and returns the slots in use.
local function in_use(leases, now)
	redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
	return redis.call('ZCARD', leases)
end

-- expire_with_last_lease makes the leases lapse with their last lease.
local function expire_with_last_lease(leases)
	local last = redis.call('ZRANGE', leases, -1, -1, 'WITHSCORES')
	if last[2] then
		-- A score may read back as "1.7e+12"; PEXPIREAT wants digits.
		redis.call('PEXPIREAT', leases, string.format('%d', tonumber(last[2])))
	end
end
