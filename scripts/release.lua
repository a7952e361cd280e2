-- release: free a holder's units, and take it out of the waiting queue.
--
-- KEYS[1]  leases: sorted set, holder -> lease deadline (ms, server time)
-- KEYS[2]  weights: hash, see lib.lua
-- KEYS[3]  queue: sorted set, waiting holder -> arrival number (fair mode)
-- KEYS[4]  queue deadlines: sorted set, waiting holder -> when its entry lapses (ms)
-- KEYS[5]  queue weights: hash, waiting holder -> n when n > 1
-- ARGV[1]  holder ID
-- ARGV[2]  '1' for fair mode: also leave the queue
-- ARGV[3]  notice channel
-- ARGV[4]  notice command: 'publish', 'spublish' or ''
--
-- Returns 1 when the holder held a live lease, else 0. Releasing twice is
-- harmless. Freed units, and a waiter leaving the queue, are announced on
-- the notice channel with the number of units freed.

local leases, weights = KEYS[1], KEYS[2]
local holder = ARGV[1]

local deadline = redis.call('ZSCORE', leases, holder)

local left = 0
if ARGV[2] == '1' then
	left = redis.call('ZREM', KEYS[3], holder)
	if left == 1 then
		redis.call('ZREM', KEYS[4], holder)
		redis.call('HDEL', KEYS[5], holder)
	end
end

if not deadline then
	if left == 1 then
		notify(ARGV[4], ARGV[3], 0)
	end
	return 0
end

local extra = extra_units(weights)
local weight = weight_of(weights, extra, holder)
set_weight(weights, extra, holder, weight, 0)
redis.call('ZREM', leases, holder)

if tonumber(deadline) <= now_ms() then
	return 0
end
notify(ARGV[4], ARGV[3], weight)
return 1
