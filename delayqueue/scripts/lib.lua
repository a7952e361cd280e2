-- lib: the queue's keys and the server's clock, for every script of the
-- delay queue, included where a script has its "-- #include lib.lua"
-- line. The helpers that only some scripts need are in wake.lua (waking
-- waiters) and give.lua (giving messages back, and the rare paths), so
-- that a script defines no function it does not use: each costs the
-- server time on every call.
--
-- Every script takes the queue's eight keys, in one Redis Cluster hash slot:
--   KEYS[1]  queue     sorted set, entry -> due time (ms, server clock); an
--                      entry is an order key, a space and the message's id
--                      and, for a message given back, a space and its
--                      deliveries so far; a push's order key is its order
--                      number (see push.lua), a given-back message's '0',
--                      so equal times come out in push order
--   KEYS[2]  leases    sorted set, 'token id' -> lease deadline (ms), one
--                      per message in flight
--   KEYS[3]  bodies    hash, id -> payload; delivery token -> 'due
--                      attempt id' for each message in flight; and, while a message is in
--                      flight, '#lease' -> a time (ms) at or before the
--                      earliest lease deadline, so that a poll sees
--                      whether leases lapsed in the read that fetches the
--                      body: a poll lowers it to the lease it writes,
--                      extend to the lease it renews, a poll that finds it
--                      passed sets it to the earliest deadline, and it
--                      goes with the queue's last message
--   KEYS[4]  attempts  hash, id -> deliveries, for each dead letter
--   KEYS[5]  dead      sorted set, id -> when it was dead-lettered (ms)
--   KEYS[6]  waiters   sorted set, consumer -> when its registration lapses
--                      (ms); the key lapses with its last registration
--   KEYS[7]  info      hash: 'seq' (the last order number taken), 'armed'
--                      and 'keeper' (the next event, and the waiter timed
--                      to it)
--   KEYS[8]  pushes    hash, id -> the push token of a message whose id
--                      its pusher's caller gave (see push.lua); a queue
--                      whose ids are all minted never has it
-- Every script's reply is a table whose first element is a status: 1 when
-- it did what it was asked, 0 when the delivery it names no longer holds
-- its lease (ack, nack, extend), 2 when nothing is due (poll).
--
-- A message's id is minted by its pusher, or given by its caller with a
-- push token minted per call, and a delivery's token by its poller, each
-- before the first send, so a call sent again finds what its first run
-- wrote. An id holds no space or control character and does not begin
-- with '#', so that it is never a field of bodies' own. A message in
-- flight has its lease in leases and its delivery under its token in
-- bodies: every script that removes the one removes the other; and every
-- script that removes a body removes its push token from pushes. info's fields, and
-- bodies' '#lease', are deleted when queue, leases and dead are all
-- empty, and the hashes empty themselves, so an empty queue leaves no key
-- but waiters.
--
-- A key of another type fails a script with WRONGTYPE before it writes
-- anything, so that such a key, and every other, is left as it was: push,
-- poll, ack and extend order their commands so that each key they write
-- was read, or written first, before any other write, or take back what
-- they wrote (push); the other scripts, and poll when leases lapsed, run
-- check_types (give.lua) before their first write.

local queue, leases, bodies, attempts, dead, waiters, info, pushes = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]

-- now_ms is the server's clock in ms.
local function now_ms()
	local t = redis.call('TIME')
	return t[1] * 1000 + (t[2] - t[2] % 1000) / 1000
end
