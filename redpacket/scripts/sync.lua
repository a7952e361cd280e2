-- sync: a write that a persister sends, with WAIT behind it, before it
-- commits the log entries it read, so that it commits only entries the
-- replicas have: the replication stream is in order, so replicas that
-- have this write have every entry written before it.
--
-- KEYS[1]  the shard's sync marker (see lib.lua): a string, kept a second
--
-- Returns {1}, the status.

redis.call('SET', KEYS[1], '1', 'PX', 1000)
return {1}
