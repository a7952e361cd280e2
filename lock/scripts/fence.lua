-- fence: the fencing token of a new owner, included where a script has its
-- "-- #include fence.lua" line.
--
-- A fence is the server's clock in microseconds, raised above the last
-- fence issued for the lock when that is as high. The last fence is kept
-- beside the lock, in a string that lives as long as the lock's lease at
-- least, so that it is there for the next owner while the lock is held,
-- and lapses by itself after: one key per lock, never more. A new owner
-- that finds it gone comes at least a lease time (1 ms or more) after the
-- last fence was issued, when the clock has passed it, unless the server's
-- clock stepped back by more than that.

-- next_fence issues and records a fence, kept for at least ttl ms; the
-- fence is exact in a Lua number (below 2^53) until the year 2255.
local function next_fence(fence, ttl)
	local t = redis.call('TIME')
	local f = t[1] * 1000000 + t[2]
	local last = tonumber(redis.call('GET', fence))
	if last and last >= f then
		f = last + 1
	end
	redis.call('SET', fence, string.format('%d', f), 'PX', ttl)
	return f
end
