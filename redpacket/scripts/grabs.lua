-- grabs: grab.lua for several users of one packet at once, in the order
-- given, in one step: each user's answer is the one grab.lua would give
-- it, run once per user in that order, one run right after the other.
--
-- KEYS[1]  packet (see lib.lua)
-- KEYS[2]  shares
-- KEYS[3]  log
-- ARGV[1]  packet id
-- ARGV[2..] the users, in order; a user may stand more than once
--
-- Returns {1, replies...}: the status, then one reply per user, in
-- order, each as grab.lua's: the user's claim "amount:seq:at", a string,
-- taken now or before; or an integer: 0 no such packet, -1 sold out, -2
-- expired with shares left.
--
-- As grab.lua's runs in turn: a user who holds a claim gets it back,
-- and so does a user who stands again after taking a share here. The
-- others, the new users, want a share each, in order of their first
-- place. A packet that is missing, sold out or expired refuses every one
-- of them, as it would refuse each in turn, since a refusal writes
-- nothing; else the shares go, one each, to the new users in order, as
-- far as they last, and each user after the last share is refused as
-- sold out. One clock read serves them all: runs one right after the
-- other may read the same ms.
--
-- Once: every claim taken is its user's field, read first, so a second
-- run (a re-send whose first reply was lost) returns each claim and takes
-- no share again. A user it refused is refused again: a packet missing
-- stays missing (until created; then grab.lua too would answer
-- otherwise), a packet sold out or expired stays so, and shares left
-- only fall.
--
-- The common path runs five commands, whatever the batch: HMGET, TIME,
-- LPOP with a count, XADD and HSET. The one log entry carries every
-- claim taken, in two fields (see lib.lua); left and left_amount are the
-- values read
-- less what was taken, written in the same HSET as the claims.

local packet, shares, log = KEYS[1], KEYS[2], KEYS[3]
local n = #ARGV - 1

local fields = {'count', 'left', 'expires', 'expired', 'left_amount'}
for i = 1, n do
	fields[5 + i] = 'u:' .. ARGV[1 + i]
end
local f = redis.call('HMGET', packet, unpack(fields))

-- reply[user]: the answer of a user who holds a claim, or has been
-- answered already; new: the users who want a share, in order, and
-- field: their fields.
local reply, new, field = {}, {}, {}
for i = 1, n do
	local user = ARGV[1 + i]
	if reply[user] == nil then
		if f[5 + i] then
			reply[user] = f[5 + i]
		else
			reply[user] = false
			new[#new + 1] = user
			field[#new] = fields[5 + i]
		end
	end
end

if #new > 0 then
	local refusal
	if not f[1] then
		refusal = 0
	elseif f[2] == '0' then
		refusal = -1
	end
	local now
	if not refusal then
		local t = redis.call('TIME')
		now = t[1] * 1000 + math.floor(t[2] / 1000)
		-- Once expired, always, as in grab.lua.
		if f[4] or now >= tonumber(f[3]) then
			refusal = -2
		end
	end
	if refusal then
		for _, user in ipairs(new) do
			reply[user] = refusal
		end
	else
		local amounts = redis.call('LPOP', shares, #new) or {}
		-- The share taken j-th here is the (count - left + j)th: below
		-- 2^17, which Lua prints as an integer.
		local taken = f[1] - f[2]
		local at = string.format(':%d', now)
		local sum = 0
		local hset = {packet}
		local took, claims = {}, {}
		for j, user in ipairs(new) do
			local amount = amounts[j]
			if amount then
				local claim = amount .. ':' .. (taken + j) .. at
				reply[user] = claim
				sum = sum + amount
				hset[2 * j] = field[j]
				hset[2 * j + 1] = claim
				took[j] = user
				claims[j] = claim
			else
				reply[user] = -1
			end
		end
		if #amounts > 0 then
			-- No user holds a NUL (Grab refuses one), nor does a claim.
			redis.call('XADD', log, '*', 'k', 'b', 'id', ARGV[1],
				'u', table.concat(took, '\0'), 'c', table.concat(claims, '\0'))
			local k = #hset
			hset[k + 1] = 'left'
			hset[k + 2] = string.format('%d', f[2] - #amounts)
			hset[k + 3] = 'left_amount'
			hset[k + 4] = string.format('%d', f[5] - sum)
			redis.call('HSET', unpack(hset))
		end
	end
end

local out = {1}
for i = 1, n do
	out[1 + i] = reply[ARGV[1 + i]]
end
return out
