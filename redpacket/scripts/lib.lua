-- lib: the layout shared by the red-packet scripts, included where a
-- script has its "-- #include lib.lua" line.
--
-- A packet lives in two keys, beside its shard's two, all in one hash slot:
--   packet  hash: total, count, split, created, expires (ms, server clock),
--           left (shares not yet taken), left_amount, expired (ms, once
--           swept), and one field 'u:' .. user per claim, holding
--           "amount:seq:at"
--   shares  list of the amounts not yet taken, the next share first
--   log     the shard's stream: one entry per packet created, per claim
--           taken alone or claims taken together, and per packet
--           expired, for the persister: a packet created is
--           k=p, id, total, count, split, created, expires; a claim is
--           id, u (the user), c (the claim, "amount:seq:at", as in the
--           packet's field); the claims that grabs.lua took in one
--           step are one entry, k=b, id, u (the users, joined by NULs)
--           and c (their claims, in the same order, joined by NULs); a
--           packet expired is k=x,
--           the packet's fields and expired, left, left_amount. A claim
--           logged before claims were one field is k=c, id, u, a
--           (amount), s (seq), t (at), and the persister still reads it.
--   due     the shard's sorted set: packet id -> expires, until swept
--   sync    the shard's marker that a persister writes, with WAIT behind
--           it, before it commits entries (see sync.lua)
--
-- Invariant, kept by every script in one step: left = LLEN shares, and
-- left_amount is their sum; count - left claims exist, with seq 1 to
-- count - left; each logged in one entry of the log.

-- now_ms is the server's clock in ms.
local function now_ms()
	local t = redis.call('TIME')
	return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
