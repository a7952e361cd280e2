-- drop: delete dead letters for good.
--
-- KEYS     the queue's eight keys (see lib.lua)
-- ARGV     the ids
--
-- Returns {1, how many of the ids were dead letters, and were deleted,
-- with their bodies and push tokens}. A drop sent again after its reply
-- was lost deletes nothing more, and does not count what its first run
-- deleted: nothing is left to tell. A queue left without messages leaves
-- no keys.

-- #include lib.lua
-- #include give.lua

local err = check_types()
if err then
	return err
end
local dropped = 0
for _, id in ipairs(ARGV) do
	if redis.call('ZREM', dead, id) == 1 then
		redis.call('HDEL', bodies, id)
		redis.call('HDEL', pushes, id)
		redis.call('HDEL', attempts, id)
		dropped = dropped + 1
	end
end
drop_if_empty()
return {1, dropped}
