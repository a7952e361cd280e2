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
// It grew from a design note (seed 004) that keeps delayed messages in a
// sorted set scored by their due time, and has a consumer poll the head
// every 10ms with a script that removes it when due. It fixes that note's
// flaws:
//
//   - Polling. The note's consumer calls Redis a hundred times a second,
//     idle or not, and is up to 10ms late. Here a consumer with nothing
//     due registers as a waiter in Redis and sleeps. A push of a message
//     due before the others wakes one waiter, through a notice naming it
//     on pub/sub (the shared notice hub: one subscription per client),
//     and only that one; the consumer that takes a message wakes one more
//     if another is due; and one waiter, the keeper, sleeps until the
//     next due time. An idle consumer costs one command a second, the
//     poll that keeps its registration (a notice lost while a
//     subscription is restored delays a message by that second at most).
//     We chose notices over BullMQ's BZPOPMIN on a marker: a blocking pop
//     ties up a connection per waiting consumer, and its timeout cannot
//     be shorter than the next due time without polling, whereas the hub
//     shares one subscription among every consumer of a process and names
//     the consumer it wakes.
//   - Client clocks. The note scores in whole seconds of the client's
//     clock, so skewed clients fire early or late, and messages due in the
//     same second come out by their names. Here scores are ms on the
//     server's clock (TIME, read in the scripts), and each message is
//     queued under an order key that grows in push order, so messages due
//     at the same ms come out in push order.
//   - At-most-once delivery. The note removes a message before it is
//     processed, so a consumer that crashes loses it. Here Poll moves it
//     to in flight with a lease (Config.Visibility); Ack removes it; a
//     lapsed lease makes it due again, with Attempt+1; after MaxAttempts
//     deliveries it goes to a dead-letter set, to read, requeue or drop.
//     Run keeps the lease alive while a handler works.
//   - Spin loops. The note's consumer spins on an empty queue. Here it
//     sleeps, as above.
//
// Every call that writes takes effect once, however often it is sent:
// go-redis sends a call again when its reply is lost (MaxRetries), so
// Push mints each message's ID, and Poll each delivery's Token, before the
// first send, and a call sent again finds what its first run wrote and
// answers as it did. Ack, Nack and Extend act on one delivery, named by
// its Token, which no later delivery of the message repeats. Each
// method's doc says what a repeat does.
//
// Payloads are binary-safe, up to MaxPayload bytes. All of a queue's keys
// share its Key's Redis Cluster hash slot; a queue without messages
// leaves no keys, but for the registry of waiting consumers, which lapses
// 3 seconds after the last one stops waiting. A key of another type fails
// the calls with WRONGTYPE and is left as it was.
package delayqueue
