-- gcra.lua: GCRA on one key, for allow_all.lua, whose rules each run it,
-- and for allow_gcra_batch.lua, whose calls each do; allow_gcra.lua runs
-- the same steps written out for its one key. Times are on the server's
-- clock, each a whole number of µs and a remainder in 1/den µs,
-- 0 <= remainder < den: den is the denominator of an event's
-- share of the period (Period/Rate, in lowest terms), 1 when the share is
-- a whole µs. share is the n events' share (n×Period/Rate); tau is a full
-- burst's (Burst×Period/Rate). Every figure is an integer below 2^53, so
-- exact, and a sum carries its remainder without passing den.
--
-- The key holds the theoretical arrival time (TAT): the moment by which
-- every event counted so far has been paid for, as an integer string of
-- µs, followed, when it has a remainder, by '+', the remainder, '/' and
-- den ("1700000000333333+1/3"). The key is back to its full allowance
-- once the TAT has passed, and lapses then.

-- gcra_tat returns the key's TAT, at least now, as whole µs and a
-- remainder in 1/den µs, or nil when the key holds a string that is not a
-- TAT: an integer, or an integer and a remainder in 1/d µs, below d. A
-- remainder kept in another den (a limit of another rate on the key) is
-- rounded up to the next µs. GET fails with WRONGTYPE on another type.
local function gcra_tat(key, now, den)
	local value = redis.call('GET', key)
	if not value then
		return now, 0
	end
	local whole, r, d = string.match(value, '^(%d+)%+(%d+)/(%d+)$')
	if whole then
		r, d = tonumber(r), tonumber(d)
		if r >= d then
			return nil
		end
	elseif string.find(value, '^%d+$') then
		whole = value
	else
		return nil
	end
	whole = tonumber(whole)
	if whole < now then
		return now, 0
	end
	if r and d == den then
		return whole, r
	elseif r and r > 0 then
		return whole + 1, 0
	end
	return whole, 0
end

-- gcra_add returns a + b, for times whole µs and remainders in 1/den µs.
local function gcra_add(a, a_rem, b, b_rem, den)
	if b_rem >= den - a_rem then
		return a + b + 1, b_rem - (den - a_rem)
	end
	return a + b, a_rem + b_rem
end

-- gcra_fits reports whether the events fit now: the TAT moved by their
-- share is at most a full burst ahead of now.
local function gcra_fits(r, now)
	local after, after_rem = gcra_add(r.tat - now, r.rem, r.share, r.share_rem, r.den)
	return after < r.tau or after == r.tau and after_rem <= r.tau_rem
end

-- gcra_write writes the TAT, kept until it has passed (PX, the lead
-- rounded up to the ms, so the key never lapses early).
local function gcra_write(key, r, now)
	local value, lead = nil, r.tat - now
	if r.rem > 0 then
		value = string.format('%d+%d/%d', r.tat, r.rem, r.den)
		lead = lead + 1
	else
		value = string.format('%d', r.tat)
	end
	redis.call('SET', key, value, 'PX', string.format('%d', math.ceil(lead / 1000)))
end

-- gcra_count moves the TAT by the events' share, and writes it.
local function gcra_count(key, r, now)
	r.tat, r.rem = gcra_add(r.tat, r.rem, r.share, r.share_rem, r.den)
	gcra_write(key, r, now)
end

-- gcra_reply returns {allowed, lead, lead's remainder, den}: the TAT's
-- lead over now, which the caller divides into what remains and how long
-- to wait.
local function gcra_reply(r, now)
	return {r.ok and 1 or 0, r.tat - now, r.rem, r.den}
end
