-- inspect: the shared limit, the live leases and the number of waiters,
-- read at one moment, for operators and tools. Writes nothing.
--
-- KEYS[1]  state: hash, see lib.lua
-- KEYS[2]  leases: sorted set, holder -> lease deadline (ms)
-- KEYS[3]  queue deadlines: sorted set, waiting holder -> when its entry lapses (ms)
-- ARGV[1]  'min max initial', as acquire.lua takes it
--
-- Returns {1, now, limit, stored, down, up, drop delay, waiters, recent
-- latency, no-load latency, then pairs holder, deadline}, integers but the
-- holders: the status 1, the server's clock (ms), the limit (within min
-- and max; initial when none is stored), 1 when a limit is stored (else
-- 0), when it last went down and up (ms; 0: never), the drop delay (ms;
-- 0: none known), the waiters whose entries are live, the latency
-- estimate that release.lua keeps with a tolerance (recent, us; no-load,
-- the least of this period and the last, ms; 0: none known), and the
-- live leases, earliest deadline first,
-- each as its holder and its deadline (ms). The slots in use are the
-- leases.

-- #include lib.lua

local state, leases, qdeadlines = KEYS[1], KEYS[2], KEYS[3]
local min, max, initial = bounds(ARGV[1])
local now = now_ms()
local limit = read_limit(state, min, max, initial)
local fields = redis.call('HMGET', state, 'limit', 'down', 'up', 'delay', 'rtt', 'rttmin', 'rttprev')
local stored = 0
if fields[1] then
	stored = 1
end
local least, prev = tonumber(fields[6]), tonumber(fields[7])
if not least or (prev and prev < least) then
	least = prev
end
local reply = {
	1, now, limit, stored,
	tonumber(fields[2] or '0'), tonumber(fields[3] or '0'), tonumber(fields[4] or '0'),
	redis.call('ZCOUNT', qdeadlines, '(' .. now, '+inf'),
	tonumber(fields[5] or '0'), least or 0,
}
local live = redis.call('ZRANGEBYSCORE', leases, '(' .. now, '+inf', 'WITHSCORES')
for i = 1, #live, 2 do
	local n = #reply
	reply[n + 1], reply[n + 2] = live[i], tonumber(live[i + 1])
end
return reply
