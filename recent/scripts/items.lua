-- items: read a page of the list, newest first. It writes nothing.
--
-- KEYS[1]  the list (see lib.lua)
-- ARGV[1]  max age in ms; 0: items never age out
-- ARGV[2]  offset: how many of the newest items to skip
-- ARGV[3]  count: the most items to return, at least 1
--
-- Returns {1, value, score, value, score, ...}, newest first, of the items
-- not older than the max age; the caller keeps offset + count within the
-- max, so items a trim has yet to drop are never read.
--
-- With a max age, the items kept are two ranges of scores (see lib.lua):
-- those in microseconds, read first, and below them those in seconds,
-- read only when the page runs past the first range: from the second's
-- start when the first read returned items, and otherwise at the offset
-- less the first range's size, which ZCOUNT tells.

local list = KEYS[1]
if ARGV[1] == '0' then
	local page = redis.call('ZREVRANGEBYSCORE', list, '+inf', '-inf', 'WITHSCORES', 'LIMIT', ARGV[2], ARGV[3])
	table.insert(page, 1, 1)
	return page
end

-- #include lib.lua

local max_age, offset, count = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local us, s = oldest_kept(now_us(), max_age)
local page = redis.call('ZREVRANGEBYSCORE', list, '+inf', us, 'WITHSCORES', 'LIMIT', ARGV[2], ARGV[3])
local got = #page / 2
if got < count then
	local skip = 0
	if got == 0 then
		skip = offset - redis.call('ZCOUNT', list, us, '+inf')
	end
	local more = redis.call('ZREVRANGEBYSCORE', list, '(' .. SECONDS, s, 'WITHSCORES',
		'LIMIT', string.format('%d', skip), string.format('%d', count - got))
	for i = 1, #more do
		page[#page + 1] = more[i]
	end
end
table.insert(page, 1, 1)
return page
