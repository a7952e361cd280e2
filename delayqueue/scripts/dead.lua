-- dead: read the oldest dead letters. It writes nothing.
--
-- KEYS     the queue's eight keys (see lib.lua)
-- ARGV[1]  how many, at most
--
-- Returns {1, id, payload, attempts, dead-lettered at (ms), ...}, oldest
-- first.

-- #include lib.lua

local out = {1}
local ids = redis.call('ZRANGE', dead, 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
for i = 1, #ids, 2 do
	local id = ids[i]
	out[#out + 1] = id
	out[#out + 1] = redis.call('HGET', bodies, id) or ''
	out[#out + 1] = tonumber(redis.call('HGET', attempts, id) or 0)
	out[#out + 1] = tonumber(ids[i + 1])
end
return out
