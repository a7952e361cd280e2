-- release: for each of one or more holders, in turn, free its slot, move
-- the shared limit by the outcome it reports, and hand the free slots to
-- the first waiters in the queue, all at one moment of the server's clock.
-- A waiter that gives up comes here too, as 'ignore', to leave the queue
-- and pass on a slot it may have been handed meanwhile. Concurrent
-- releases on one Limiter share one run (see scripts.go); each holder is
-- answered, and moves the limit, as its release alone, made in turn at
-- this moment, would. The state is read once, and each of its fields
-- written at most once (see below: a run moves the limit at most once each
-- way).
--
-- KEYS[1]  state: hash, see lib.lua
-- KEYS[2]  leases: sorted set, holder -> lease deadline (ms)
-- KEYS[3]  queue: sorted set, waiting holder -> arrival number
-- KEYS[4]  queue deadlines: sorted set, waiting holder -> when its entry lapses (ms)
-- KEYS[5]  queue wants: hash, waiting holder -> '1:lease ms'
-- ARGV[1]  'min max initial', as acquire.lua takes it
-- ARGV[2]  'window step factor' or 'window step factor tolerance': a
--          change at most once per window (ms); an increase adds step, a
--          decrease multiplies by factor; tolerance (thousandths, 1000 to
--          100000), when given, turns on the latency rule below
-- ARGV[3]  'command claim channel': the notice command ('publish',
--          'spublish' or none), the claim time in ms (how long a handed
--          slot waits for its waiter's claim), and the notice channel
-- ARGV[4] to ARGV[7], and so on in fours, one four per holder:
--          the holder ID;
--          the outcome: 'success', 'dropped' or 'ignore';
--          when the slot was granted (ms, the server's clock, as the
--          acquire's reply or the hand-off's notice gave it); 0: unknown;
--          the slot's lease deadline (ms) as the caller knows it; 0: unknown
--
-- Returns {1, then one reply per holder, in order}, a holder's reply being
-- {held, limit before, limit after, in use after}, followed, with a
-- tolerance, by {recent latency us, no-load latency ms} (0: none known). held is 1 when the
-- holder held a live lease, which is freed, else 0, and then nothing at
-- all changes: no slot is freed and no outcome counted. So a release sent
-- twice (go-redis sends a run again when its reply was lost, and a caller
-- may call again after an unknown outcome), or a second outcome reported
-- for one slot, frees one slot and counts one outcome. A release sent
-- again answers 1, as its first run did, while the clock is still below
-- the deadline the caller knows: a live lease is gone before its deadline
-- only by its release. At or past it, or with no deadline known, it
-- answers 0.
--
-- The limit moves only on a live lease's release:
--   'dropped'  the limit becomes max(min, min(limit - 1, floor(limit *
--              factor))), unless it went down less than a window ago, or
--              the slot was granted before it last went down (or in the
--              same ms, or at a time unknown, '0'): a burst of
--              drops from one overload counts once, and the calls admitted
--              under the old limit do not count against the new one. A
--              drop that counts keeps the limit before it as the peak, and
--              the time from the slot's grant to this drop as the drop
--              delay: how long an overshoot takes to show.
--   'success'  the limit becomes min(max, limit + step) when it was nearly
--              in use (at most a tenth of it, or one slot, free before
--              this release, or a waiter queued), no drop counted for HOLD
--              windows nor for a drop delay, and it has not gone up for a
--              window, or, near the peak (from NEAR steps below it to one
--              above), for two drop delays: there each step has the time
--              to show its overshoot, and to have it counted, before the
--              next, so that the decreases, a step each at small limits,
--              outpace the increases while the limit is past the capacity.
--              Away from the peak the limit climbs one step per window.
--              The drop delay counts up to MAXDELAY windows (of this
--              caller's), so that one call that hung does not slow the
--              limit for long.
--   'ignore'   the limit stays as it is.
-- With a tolerance, a 'success' of a live lease whose grant is known also
-- feeds its latency, now - granted (ms, up to MAXRTT), to the estimate the
-- state keeps: the no-load latency is the least latency of this period of
-- PERIOD windows (rttmin, since rttminat) and the last one (rttprev); the
-- recent latency, rtt (us), the mean of one window's latencies (rttsum
-- over rttn, since rttat) of calls granted after the last decrease. At the
-- first success a window or more after rttat, a window with latencies
-- whose mean exceeds tolerance x the no-load latency (at least 1 ms),
-- compared in whole numbers, lowers the limit, unless it went down within
-- HOLD windows: to max(min, floor(limit / 2), min(limit - 1, floor(limit
-- * factor), floor(limit * no-load / recent))), the capacity the latency
-- shows; and while rtt exceeds it, a 'success' raises nothing. Without a
-- tolerance, none of this is read or written.
-- All holders of a run share its moment, so a run moves the limit at most
-- once each way, as releases made within one ms would.
--
-- Free slots (the limit less the slots in use: none while a decrease left
-- the limit at or below them) go at once to the waiters queued first. A
-- waiter handed a slot holds a lease that lapses after the claim time,
-- and a notice
-- '*now ms:held until ms:deadline ms:value:arrival number:holder' tells
-- its process (see internal/waitqueue): the waiter returns with the slot
-- and claims it (claim.lua) for its full lease time. A waiter that died
-- while queued thus holds a slot for the claim time at most. The value is
-- in use × 2^26 + limit, both after the hand-off, for the waiter to report
-- (limits are below 2^26, so it is exact).

-- #include lib.lua

-- HOLD is how many windows the limit holds after a decrease before it
-- grows again: the overload has the time to show whether the decrease was
-- enough, and a limit at the capacity does not climb back past it at once.
-- NEAR is how many steps below the peak the limit climbs at the pace of
-- the drop delay; MAXDELAY is the longest drop delay that counts, in
-- windows.
local HOLD, NEAR, MAXDELAY = 5, 2, 20
-- PERIOD is the windows of one period of the no-load latency (the Go
-- side's LatencyPeriod); MAXRTT the longest latency that counts, in ms,
-- and MAXN the most latencies a window's mean takes, so that every
-- product below stays a whole number below 2^53: rttsum * 1000 <= 2^46,
-- tolerance * no-load * rttn < 10^5 * 2^20 * 2^16.
local PERIOD, MAXRTT, MAXN = 100, 1048576, 65536

local state, leases = KEYS[1], KEYS[2]
local queue, qdeadlines, qwants = KEYS[3], KEYS[4], KEYS[5]
local min, max, initial = bounds(ARGV[1])
local window, step, factor, tolerance = string.match(ARGV[2], '^(%d+) (%d+) ([%d.]+) ?(%d*)$')
window, step, factor, tolerance = tonumber(window), tonumber(step), tonumber(factor), tonumber(tolerance) or 0
local command, claim, channel -- of ARGV[3], read at the first hand-off

local now = now_ms()
local used = in_use(leases, now)
-- The state, as the holders so far left it. (The rules below are written
-- out in the loop, not as functions: closures made at each run would cost
-- a lone release about a sixth more of the server's time.)
local limit, down, up, delay, peak = read_state(state, min, max, initial)
delay = math.min(MAXDELAY * window, delay)
-- The latency estimate, with a tolerance (see above); sensed: it changed.
local rtt, rttsum, rttn, rttat, rttmin, rttprev, rttminat, sensed
if tolerance > 0 then
	local f = redis.call('HMGET', state, 'rtt', 'rttsum', 'rttn', 'rttat', 'rttmin', 'rttprev', 'rttminat')
	rtt, rttsum, rttn, rttat = tonumber(f[1]) or 0, tonumber(f[2]) or 0, tonumber(f[3]) or 0, tonumber(f[4]) or now
	rttmin, rttprev, rttminat = tonumber(f[5]), tonumber(f[6]), tonumber(f[7]) or now
end

-- #include queue.lua

local waiting = redis.call('EXISTS', queue) == 1
local freed, moved, handed, pruned = false, false, false, false
local reply = {1}
for i = 4, #ARGV, 4 do
	local holder, outcome = ARGV[i], ARGV[i + 1]
	local granted, known = tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
	if waiting then
		leave_queue(queue, qdeadlines, qwants, holder)
	end
	if redis.call('ZREM', leases, holder) == 0 then
		local held = 0
		if now < known then
			held = 1
		end
		reply[#reply + 1] = {held, limit, limit, used}
		if tolerance > 0 then
			local r = reply[#reply]
			r[5], r[6] = rtt, (rttmin or rttprev) and math.min(rttmin or MAXRTT, rttprev or MAXRTT) or 0
		end
	else
		local before = limit
		if outcome == 'dropped' then
			if now - down >= window and granted > down then
				peak, down, delay = limit, now, math.min(MAXDELAY * window, math.max(0, now - granted))
				limit = math.max(min, math.min(limit - 1, math.floor(limit * factor)))
				redis.call('HSET', state, 'down', down, 'delay', delay, 'peak', peak)
			end
		elseif outcome == 'success' then
			local calm = true
			if tolerance > 0 then
				if granted > 0 and now >= granted then
					local took = math.min(MAXRTT, now - granted)
					if now - rttminat >= PERIOD * window then
						rttprev, rttmin, rttminat = rttmin or rttprev, took, now
					elseif not rttmin or took < rttmin then
						rttmin = took
					end
					if granted > down and rttn < MAXN then
						rttsum, rttn = rttsum + took, rttn + 1
					end
					sensed = true
				end
				local noload = math.max(1, math.min(rttmin or MAXRTT, rttprev or MAXRTT))
				if now - rttat >= window then
					if rttn > 0 then
						rtt = math.floor(rttsum * 1000 / rttn)
						if rttsum * 1000 > tolerance * noload * rttn and now - down >= HOLD * window then
							local cut = math.floor(limit * (noload * 1000 / rtt))
							limit = math.max(min, math.floor(limit / 2), math.min(limit - 1, math.floor(limit * factor), cut))
							down = now
							redis.call('HSET', state, 'down', down)
						end
					end
					rttsum, rttn, rttat, sensed = 0, 0, now, true
				end
				calm = rtt <= tolerance * noload
			end
			local pace = window
			if limit >= peak - NEAR * step and limit < peak + step then
				pace = math.max(window, 2 * delay)
			end
			if calm and (waiting or limit - used <= math.max(1, math.floor(limit / 10))) and now - up >= pace and now - down >= math.max(HOLD * window, delay) then
				limit, up = math.min(max, limit + step), now
				redis.call('HSET', state, 'up', up)
			end
		end
		freed, moved = true, moved or limit ~= before
		used = used - 1

		if waiting then
			if not pruned then
				prune_queue(queue, qdeadlines, qwants, now)
				command, claim, channel = string.match(ARGV[3], '^(%a*) (%d+) (.*)$')
				claim, pruned = tonumber(claim), true
			end
			while used < limit do
				local first = redis.call('ZRANGE', queue, 0, 0, 'WITHSCORES')
				local waiter, arrival = first[1], first[2]
				if not waiter then
					break
				end
				local _, lease = wanted(redis.call('HGET', qwants, waiter) or '')
				leave_queue(queue, qdeadlines, qwants, waiter)
				-- An entry without its wants (evicted?) is dropped, not served.
				if lease then
					local held = tonumber(redis.call('ZSCORE', leases, waiter))
					local until_ms = math.max(held or 0, now + math.min(lease, claim))
					redis.call('ZADD', leases, until_ms, waiter)
					if not held then
						used = used + 1
					end
					handed = true
					if command ~= '' then
						local notice = string.format('*%d:%d:%d:%d:%d:', now, until_ms - 1, math.max(until_ms, now + lease), used * HANDED_BASE + limit, tonumber(arrival))
						redis.call(command, channel, notice .. waiter)
					end
				end
			end
		end
		reply[#reply + 1] = {1, before, limit, used}
		if tolerance > 0 then
			local r = reply[#reply]
			r[5], r[6] = rtt, (rttmin or rttprev) and math.min(rttmin or MAXRTT, rttprev or MAXRTT) or 0
		end
	end
	if waiting then
		waiting = redis.call('EXISTS', queue) == 1
	end
end

if moved then
	redis.call('HSET', state, 'limit', limit)
end
if sensed then
	redis.call('HSET', state, 'rtt', rtt, 'rttsum', rttsum, 'rttn', rttn, 'rttat', rttat, 'rttminat', rttminat)
	if rttmin then
		redis.call('HSET', state, 'rttmin', rttmin)
	end
	if rttprev then
		redis.call('HSET', state, 'rttprev', rttprev)
	end
end
if freed then
	redis.call('PEXPIRE', state, STATE_TTL)
end
if handed then
	expire_with_last_lease(leases)
end
return reply
