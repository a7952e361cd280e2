-- allow_all: count each rule's events against its limit if every rule's
-- events fit now; otherwise count none. The keys share one hash slot.
--
-- KEYS[i]        rule i's data key, as in allow_gcra.lua or allow_window.lua
-- ARGV[4i-3]     rule i's algorithm: 'g' GCRA, 'w' fixed window
-- ARGV[4i-2..4i] its arguments as in allow_gcra.lua (cost, tau, n) or
--                allow_window.lua (window, rate, n)
--
-- Returns {status, then 4 numbers per rule, in order, as those scripts
-- reply}: status is 1 when every rule's events fit and all were counted,
-- 0 when none were; a rule's allowed is 1 when its own events fit. Every
-- key is read before any is written, so a key of another kind fails the
-- whole call with nothing written.
--
-- A call carries no identity, so a re-sent call (its reply lost) runs
-- again as a new one, against what its first run counted: it counts
-- again only if every rule still has room, so no key passes its limit.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

-- #include gcra.lua
-- #include window.lua

local rules, all = {}, true
for i, key in ipairs(KEYS) do
	local r = {kind = ARGV[4 * i - 3], cost = tonumber(ARGV[4 * i - 2]), tau = tonumber(ARGV[4 * i - 1]), n = tonumber(ARGV[4 * i])}
	if r.kind == 'g' then
		r.tat = gcra_tat(key, now)
		if not r.tat then
			return redis.error_reply('ERR the key of rule ' .. i .. ' holds a string that is not a GCRA time')
		end
		r.ok = gcra_fits(r.tat, now, r.cost, r.tau, r.n)
	else
		r.count, r.ttl = window_read(key)
		if not r.count then
			return redis.error_reply('ERR the key of rule ' .. i .. ' holds a string that is not a count')
		end
		r.ok = window_fits(r.count, r.n, r.tau)
	end
	all = all and r.ok
	rules[i] = r
end

local reply = {all and 1 or 0}
for i, key in ipairs(KEYS) do
	local r, out = rules[i], nil
	if r.kind == 'g' then
		if all and r.n > 0 then
			r.tat = gcra_count(key, r.tat, now, r.cost, r.n)
		end
		out = gcra_reply(r.tat, now, r.cost, r.tau, r.n, r.ok)
	else
		local ttl = window_repair(key, r.cost, r.ttl)
		if all and r.n > 0 then
			r.count, ttl = window_count(key, r.cost, r.n, ttl)
		end
		out = window_reply(r.count, ttl, r.tau, r.n, r.ok)
	end
	for _, v in ipairs(out) do
		reply[#reply + 1] = v
	end
end
return reply
