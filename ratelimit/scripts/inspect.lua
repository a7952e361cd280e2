-- inspect: a key's state under a limit, as an ask of 0 events reports it,
-- for operators and tools. Writes nothing: a count left without an expiry
-- keeps none.
--
-- KEYS[1]  the limit's data key, as in allow_gcra.lua or allow_window.lua
-- ARGV     'g' and the six of allow_gcra.lua, n being 0 (share, tau, 0,
--          den, share's remainder, tau's remainder), or 'w' and the three
--          of allow_window.lua (window, rate, 0)
--
-- Returns {allowed (0 when the key is over its limit, else 1), then the
-- three numbers allow_gcra.lua or allow_window.lua reply}. A key of
-- another type fails with WRONGTYPE; a string that is not the limit's
-- data, with an error.

local key = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

-- #include gcra.lua
-- #include window.lua

if ARGV[1] == 'g' then
	local r = {share = tonumber(ARGV[2]), tau = tonumber(ARGV[3]), n = tonumber(ARGV[4]),
		den = tonumber(ARGV[5]), share_rem = tonumber(ARGV[6]), tau_rem = tonumber(ARGV[7])}
	r.tat, r.rem = gcra_tat(key, now, r.den)
	if not r.tat then
		return redis.error_reply('ERR the key holds a string that is not a GCRA time')
	end
	r.ok = gcra_fits(r, now)
	return gcra_reply(r, now)
end
local window, rate = tonumber(ARGV[2]), tonumber(ARGV[3])
local count, ttl = window_read(key)
if not count then
	return redis.error_reply('ERR the key holds a string that is not a count')
end
return window_reply(count, ttl, rate, 0, window_fits(count, 0, rate))
