-- inspect: the live leases and the waiting queue of one key, read at one
-- moment, for operators and tools. Writes nothing.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
-- KEYS[3]  queue: sorted set, waiting holder -> arrival number
-- KEYS[4]  queue deadlines: sorted set, waiting holder -> when its entry lapses (ms)
-- KEYS[5]  queue wants: hash, waiting holder -> 'n:lease ms:limit'
--
-- Returns a flat array: the status 1, then strings: the server's clock (ms), the units in
-- use, the number h of live leases; then h triples {holder, deadline ms,
-- weight}, earliest deadline first, as holders.lua gives them; then, in
-- arrival order, one sextuple per live queue entry {waiter, arrival
-- number, entry deadline ms, units wanted, lease time ms, the waiter's
-- limit or 0}. An entry that has lapsed, or that has lost its wants, is
-- left out: the next script that writes drops it (prune_queue, and
-- release.lua), and serves no one from it.

-- #include lib.lua
-- #include queue.lua

local leases, weights = KEYS[1], KEYS[2]
local queue, qdeadlines, qwants = KEYS[3], KEYS[4], KEYS[5]
local now = now_ms()
local extra = extra_units(weights)

local live = redis.call('ZRANGEBYSCORE', leases, '(' .. now, '+inf', 'WITHSCORES')
local units, held = 0, {}
for i = 1, #live, 2 do
	local weight = weight_of(weights, extra, live[i])
	units = units + weight
	held[#held + 1] = live[i]
	held[#held + 1] = string.format('%d', tonumber(live[i + 1]))
	held[#held + 1] = string.format('%d', weight)
end

local out = {1, string.format('%d', now), string.format('%d', units), string.format('%d', #live / 2)}
for _, v in ipairs(held) do
	out[#out + 1] = v
end

local entries = redis.call('ZRANGE', queue, 0, -1, 'WITHSCORES')
for i = 1, #entries, 2 do
	local waiter = entries[i]
	local lapses = tonumber(redis.call('ZSCORE', qdeadlines, waiter) or 0)
	local want = redis.call('HGET', qwants, waiter)
	if lapses > now and want then
		local n, lease, limit = wanted(want)
		out[#out + 1] = waiter
		out[#out + 1] = string.format('%d', tonumber(entries[i + 1]))
		out[#out + 1] = string.format('%d', lapses)
		out[#out + 1] = string.format('%d', n or 1)
		out[#out + 1] = string.format('%d', lease or 0)
		out[#out + 1] = string.format('%d', limit or 0)
	end
end
return out
