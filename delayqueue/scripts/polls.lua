-- polls: the calls of many Polls in one script call, all with the same
-- waiting flag, each answered as poll.lua alone, run for each in turn,
-- would answer it; the due messages they take are read with one ZRANGE
-- and moved with one ZADD, one ZREM and one HSET.
--
-- KEYS     the queue's eight keys (see lib.lua)
-- ARGV[1]  visibility: the lease time, ms
-- ARGV[2]  max attempts
-- ARGV[3]  registration time of a waiter, ms
-- ARGV[4]  refresh: the longest sleep, ms
-- ARGV[5]  'command channel' for notices (see push.lua)
-- ARGV[6]  '1' when each call is of a Poll that has registered as a
--          waiter before, else '0' (poll.lua's ARGV[7])
-- ARGV[7..] the calls' delivery tokens, one per Poll, in arrival order
--
-- Returns {1, then six fields for each call, in order}: poll.lua's reply
-- to it, {1, id, payload, attempt, due ms, lease deadline ms} or {2, ms to
-- wait}, the latter padded with four zeros.
--
-- Why each answer is poll.lua's, for the calls run in turn at one clock
-- reading:
-- - Lapsed leases: the first call alone would give back those that lapsed
--   (when '#lease' has passed, see lib.lua); they are given back once,
--   first, and the reads made again, so every call reads the queue as it
--   is after them.
-- - A call whose token names a delivery already was sent again after its
--   first run made it: it is answered from that delivery, and takes
--   nothing, as in poll.lua.
-- - The other calls, in order, each take the first entry still due: the
--   k-th of them takes the k-th due entry of the ZRANGE, which reads as
--   many entries as calls (one more for waiters, to see the event after
--   them). Each taken entry is moved as poll.lua moves one: its lease
--   under 'token id' at now plus visibility, the same deadline for all,
--   its delivery under its token, '#lease' lowered to that deadline.
-- - Waking, where poll.lua chains (waiters, or after lapsed leases): each
--   taker alone would wake a live waiter when the entry after its own is
--   due. The takers that were waiters leave the waiters first, and then
--   as many live waiters are woken as entries are left due, up to the
--   number of takers, so every message left due has a waiter woken to
--   take it, and none is woken to find nothing; when one of the takers
--   was the keeper, the keeper's fields go and one waiter is woken to be
--   the next, if the queue holds messages, as in poll.lua.
-- - The calls left without a message, which come after every taker since
--   the due entries ran out: with ARGV[6] '0', {2, 0}, writing nothing;
--   with '1', each registers as a waiter, and in turn becomes the keeper,
--   timed to the next event (the first entry left, or the earliest
--   lease), unless a live keeper is timed to it or before; so the first
--   of them may, and the next find it the keeper and sleep refresh.
-- A batch sent again after its reply was lost answers each call as
-- poll.lua sent again would: from its delivery, or as a call that took
-- nothing.
--
-- Every key it writes but leases is read before its first write, which
-- is to leases (waiters and info, where it chains, whether or not a
-- taker was a waiter), so a key of another type fails it with WRONGTYPE
-- before anything is written; when leases lapsed, check_types runs first.
-- Without takers, it writes only waiters and info, after reading them.

-- #include lib.lua
-- #include wake.lua

local vis, notify, waiter = tonumber(ARGV[1]), ARGV[5], ARGV[6] == '1'
local now = now_ms()
local chain = waiter
local n = #ARGV - 6

-- look reads the first n entries (n + 1 for waiters), the tokens'
-- deliveries, '#lease', and the due entries' bodies: due[k] is the k-th
-- due entry, {entry, due, id, deliveries so far}.
local head, due, known
local function look()
	head = redis.call('ZRANGE', queue, 0, chain and n or n - 1, 'WITHSCORES')
	due = {}
	local fields = {}
	for k = 7, #ARGV do
		fields[#fields + 1] = ARGV[k]
	end
	fields[#fields + 1] = '#lease'
	for i = 1, #head, 2 do
		if #due == n or head[i + 1] + 0 > now then
			break
		end
		local e, c, id, m = head[i], string.byte(head[i])
		if c > 48 and c < 58 and string.byte(e, 15) == 32 then
			id, m = string.sub(e, 16), 0
		else
			id, m = string.match(e, '^%w+ (%S+) ?(%d*)$')
			if not id then
				return redis.error_reply('ERR delayqueue entry ' .. e .. ' is not of this release: drain the queue with the release that wrote it')
			end
			m = tonumber(m) or 0
		end
		due[#due + 1] = {e, head[i + 1], id, m}
		fields[#fields + 1] = id
	end
	known = redis.call('HMGET', bodies, unpack(fields))
end

local err = look()
if err then
	return err
end
if known[n + 1] and known[n + 1] + 0 <= now then
-- #include give.lua
	chain = true
	err = lapse(now, tonumber(ARGV[2])) or look()
	if err then
		return err
	end
end

local out, taken, resent = {1}, 0, {}
local deadline = now + vis
local adds, rems, recs, takers = {}, {}, {}, {}
for k = 1, n do
	local token, rec = ARGV[k + 6], known[k]
	local o = #out
	if rec then
		resent[#resent + 1] = k
		out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5], out[o + 6] = 1, '', '', 0, 0, 0
	elseif taken < #due then
		taken = taken + 1
		local d = due[taken]
		local e, at, id, m = d[1], d[2], d[3], d[4]
		adds[#adds + 1] = deadline
		adds[#adds + 1] = token .. ' ' .. id
		rems[#rems + 1] = e
		recs[#recs + 1] = token
		recs[#recs + 1] = at .. ' ' .. (m + 1) .. ' ' .. id
		takers[#takers + 1] = token
		out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5], out[o + 6] =
			1, id, known[n + 1 + taken] or '', m + 1, tonumber(at), deadline
	else
		out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5], out[o + 6] = 2, 0, 0, 0, 0, 0
	end
end

if taken > 0 then
	local first, keeper, left = nil, nil, {}
	if chain then
		-- Both reads come before the first write, even when no taker
		-- was a waiter, so that waiters and info, which a batch of
		-- takers and waiters writes after the takes, fail it with
		-- WRONGTYPE before anything is written.
		local was = redis.call('ZMSCORE', waiters, unpack(takers))
		for k = 1, taken do
			if was[k] then
				left[#left + 1] = takers[k]
			end
		end
		keeper = redis.call('HGET', info, 'keeper')
	end
	-- The first write is to leases, which nothing read: a leases of
	-- another type fails it, with nothing written.
	redis.call('ZADD', leases, unpack(adds))
	redis.call('ZREM', queue, unpack(rems))
	if not (known[n + 1] and known[n + 1] + 0 <= deadline) then
		recs[#recs + 1] = '#lease'
		recs[#recs + 1] = deadline
	end
	redis.call('HSET', bodies, unpack(recs))
	if chain then
		if #left > 0 then
			redis.call('ZREM', waiters, unpack(left))
		end
		local wakes = 0
		local next = head[2 * taken + 2]
		if next and next + 0 <= now then
			wakes = math.min(taken, redis.call('ZCOUNT', queue, '-inf', now))
		end
		for _, token in ipairs(left) do
			if keeper == token then
				redis.call('HDEL', info, 'armed', 'keeper')
				if wakes == 0 and redis.call('EXISTS', queue, leases) > 0 then
					wakes = 1
				end
			end
		end
		for _ = 1, wakes do
			first = live_waiter(now)
			if not first then
				break
			end
			wake(first, notify)
		end
	end
end

-- The calls sent again: each answered from the delivery its first run
-- made.
for _, k in ipairs(resent) do
	local rec, o = known[k], 1 + 6 * (k - 1)
	local at, attempt, id = string.match(rec, '^(%d+) (%d+) (.*)$')
	out[o + 2], out[o + 3], out[o + 4], out[o + 5] = id, redis.call('HGET', bodies, id) or '', tonumber(attempt), tonumber(at)
	out[o + 6] = tonumber(redis.call('ZSCORE', leases, ARGV[k + 6] .. ' ' .. id) or 0)
end

if not waiter or taken + #resent == n then
	return out
end
-- The calls left register as waiters, in turn: each reads the keeper as
-- the calls before it left it, and whether its registration is live as
-- it was before the batch, unless one of those calls made it the keeper.
local reg, refresh = tonumber(ARGV[3]), tonumber(ARGV[4])
local armed, keeper = unpack(redis.call('HMGET', info, 'armed', 'keeper'))
armed = tonumber(armed)
local lease = tonumber(redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')[2])
redis.call('ZREMRANGEBYSCORE', waiters, '-inf', now)
local event = tonumber(head[2 * taken + 2])
if lease then
	event = math.min(event or lease, lease)
end
local regs, live, timed = {}, {}, false
for k = 1, n do
	local o, token = 1 + 6 * (k - 1), ARGV[k + 6]
	if out[o + 1] == 2 then
		regs[#regs + 1] = now + reg
		regs[#regs + 1] = token
		if event and keeper and keeper ~= token and armed and armed > now and armed <= event and live[keeper] == nil then
			live[keeper] = tonumber(redis.call('ZSCORE', waiters, keeper) or 0) > now
		end
		if not event then
			out[o + 2] = refresh
		elseif keeper and keeper ~= token and armed and armed > now and armed <= event and live[keeper] then
			out[o + 2] = refresh
		else
			armed, keeper, timed = event, token, true
			live[token] = true
			out[o + 2] = math.max(math.min(event - now, refresh), 0)
		end
	end
end
redis.call('ZADD', waiters, unpack(regs))
redis.call('PEXPIRE', waiters, reg)
if timed then
	redis.call('HSET', info, 'armed', armed, 'keeper', keeper)
end
return out
