// Package delayqueue is a delay queue on Redis: messages due after a
// delay, to the millisecond, on the server's clock; consumers woken when
// one is due rather than polling; delivery at least once, with a
// visibility lease, retries and a dead-letter set.
//
//	q, err := delayqueue.New(client, delayqueue.Config{Key: "jobs:emails"})
//	...
//	id, err := q.Push(ctx, payload, 15*time.Minute) // due in 15 minutes
//	...
//	err = q.Run(ctx, 8, func(ctx context.Context, m delayqueue.Message) error {
//		return send(ctx, m.Payload) // nil acks it; an error retries it after a backoff
//	})
//
// Poll, Ack, Nack and Extend are the parts Run is made of, for callers
// that drive their own loop.
//
// How it works:
//
//   - No polling. A consumer with nothing due registers in Redis as a
//     waiter and sleeps. A push of a message due before the others wakes
//     one waiter, through a notice naming it on pub/sub (one subscription
//     per client, shared by every consumer of the process), and only that
//     one; a woken waiter that takes a message wakes one more if another
//     is due; and one waiter, the keeper, sleeps until the next due time. An
//     idle consumer costs one command a second, the poll that keeps its
//     registration (a notice lost while a subscription is restored delays
//     a message by that second at most). Notices are used rather than a
//     blocking pop (BZPOPMIN) on a marker: a blocking pop ties up a
//     connection per waiting consumer, and its timeout cannot be shorter
//     than the next due time without polling.
//   - The server's clock. Due times are ms on the server's clock (TIME,
//     read in the scripts), so clients whose clocks are off from each
//     other still agree, and each message is queued under an order key
//     that grows in push order, so messages due at the same ms come out
//     in push order.
//   - Delivery at least once. Poll moves a message to in flight with a
//     lease (Config.Visibility); Ack removes it; a lapsed lease makes it
//     due again, with Attempt+1; after MaxAttempts deliveries it goes to a
//     dead-letter set, to read, requeue or drop. Run keeps the lease alive
//     while a handler works.
//
// Every call that writes takes effect once, however often it is sent:
// go-redis sends a call again when its reply is lost (MaxRetries), so
// Push mints each message's ID, and Poll each delivery's Token, before the
// first send, and a call sent again finds what its first run wrote and
// answers as it did. Ack, Nack and Extend act on one delivery, named by
// its Token, which no later delivery of the message repeats. Each
// method's doc says what a repeat does.
//
// A call that fails with an error matching ErrOutcomeUnknown (sent, but
// no answer came back) may or may not have taken effect: call it again
// with the same arguments, but for Push, PushAt and PushBatch, which mint
// new IDs and so may queue a message twice (never lose it).
//
// Payloads are binary-safe, up to MaxPayload bytes. A queue's keys carry
// the package's name inside its Key's hash tag ("{jobs}/delayqueue" and
// keys beside it, for a Key "jobs"; see Config.Key), so they share one
// Redis Cluster hash slot and no other package's keys for the same Key.
// A queue without messages leaves no keys, but for the registry of
// waiting consumers, which lapses 3 seconds after the last one stops
// waiting. A key of another type fails the calls that use it with
// WRONGTYPE, before they write anything, and is left as it was.
//
// # Failovers and moving slots
//
// On a Redis Cluster, every call follows the Cluster as it changes: a
// redirect is followed, and a slot in the middle of a move is tried again
// until the call's context ends. Replication is asynchronous: an
// operator's CLUSTER FAILOVER loses nothing, since the replica catches up
// first, but a forced takeover can lose the last writes the old master
// acknowledged: a message pushed there is lost, and an ack or a delete made there is undone, so the message is delivered again.
package delayqueue
