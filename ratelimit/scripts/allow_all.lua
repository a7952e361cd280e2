-- allow_all: count each rule's events against its limit if every rule's
-- events fit now; otherwise count none. The keys share one hash slot.
--
-- KEYS[i]  rule i's data key, as in allow_gcra.lua or allow_window.lua
-- ARGV     each rule's arguments in turn, in the order of KEYS: 'g' and
--          the six of allow_gcra.lua (share, tau, n, den, share's
--          remainder, tau's remainder; den is 1 and the remainders 0 when
--          an event's share is a whole µs), or 'w' and the three of
--          allow_window.lua (window, rate, n)
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

local rules, all, a = {}, true, 1
for i, key in ipairs(KEYS) do
	local r = {kind = ARGV[a]}
	if r.kind == 'g' then
		r.share, r.tau, r.n = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
		r.den, r.share_rem, r.tau_rem = tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5]), tonumber(ARGV[a + 6])
		a = a + 7
		r.tat, r.rem = gcra_tat(key, now, r.den)
		if not r.tat then
			return redis.error_reply('ERR the key of rule ' .. i .. ' holds a string that is not a GCRA time')
		end
		r.ok = gcra_fits(r, now)
	else
		r.cost, r.tau, r.n = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
		a = a + 4
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
			gcra_count(key, r, now)
		end
		out = gcra_reply(r, now)
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
