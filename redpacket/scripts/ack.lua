-- ack: take log entries a persister has committed off the log: acked in
-- its group and deleted, in one step, so that the log holds only entries
-- not yet written.
--
-- KEYS[1]  log (see lib.lua)
-- ARGV[1]  the persister's consumer group
-- ARGV[2..] the entries' IDs
--
-- Returns {1}, the status. Sent again, it acks and deletes nothing more:
-- an entry acked and deleted stays so, and entries the log has never held
-- are not named.

local log, group = KEYS[1], ARGV[1]
-- unpack is bounded by Lua's stack, so go in chunks.
for i = 2, #ARGV, 1000 do
	local last = math.min(i + 999, #ARGV)
	redis.call('XACK', log, group, unpack(ARGV, i, last))
	redis.call('XDEL', log, unpack(ARGV, i, last))
end
return {1}
