// Package notice delivers pub/sub notices to the goroutines of a process
// that wait for them, over one subscription per client rather than one per
// waiter.
//
// A waiter joins a channel under a name, and a notice on the channel wakes
// only the waiters of the name it names, if they expect it (see
// Waiter.Expect). Each waiter keeps the last notice for its name, since a
// notice can arrive before the waiter knows it is the one it waits for.
// Notices are hints: one sent while a subscription is not confirmed, or
// while a broken connection is restored, is lost, so every waiter of a
// channel is woken when its subscription is confirmed, and must then look
// for itself.
//
// The hub of a client holds a single subscription on a standalone server;
// on Redis Cluster, one sharded subscription (SSUBSCRIBE) per channel, on
// the node of the channel's hash slot, opened again on the slot's new
// node when a failover or a move ends it; on a Ring, one subscription per
// channel, on the shard of the channel's name. A channel stays subscribed
// for a while after its last waiter leaves (see Registry.SetLinger), so
// that bursts of waiting do not subscribe and unsubscribe each time; a hub
// left with no channel closes and is forgotten.
package notice
