// Package delayqueue is a delay queue on Redis: messages due after a
// delay, scheduled in milliseconds on the server's clock; consumers woken
// when one is due rather than polling, so that a message is delivered
// within milliseconds of its due time on a quiet machine, and within tens
// of milliseconds on a busy one; delivery at least once, with a
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
// that drive their own loop. Len counts the messages in each State,
// Messages lists them, and Cancel deletes messages that are ready or
// delayed, by ID, before they are delivered.
//
// Due times are read on the server's clock, so clients whose clocks are
// off from each other still agree, and messages due at the same
// millisecond come out in push order. A consumer with nothing due sleeps
// until a push, a Nack or a lapsed lease makes a message due: an idle
// consumer costs Redis about one command a second. Delivery is at least
// once: a message whose lease lapses is delivered again, with Attempt+1,
// and after Config.MaxAttempts deliveries it becomes a dead letter, to
// read, requeue or drop.
//
// Every call that writes takes effect once, however often go-redis sends
// it (MaxRetries): a call sent again after its reply was lost answers as
// its first run did. Each method's doc says what a call made again does.
// A call that fails with an error matching ErrOutcomeUnknown (sent, but
// no answer came back) may or may not have taken effect: call it again
// with the same arguments. A Push made again queues the message once when
// it carries the caller's ID (WithID, Job.ID), and may queue it twice
// (never lose it) without one, since each Push mints a new ID.
//
// Concurrent calls of one kind on a Queue share script calls: the
// pushes, the calls of Polls, and the Acks, each kind as one script call
// while another of its kind is in flight, with no timer, so a lone call
// is sent at once. This changes nothing a caller sees but speed: each
// gets the answer, the error and the Observer event its call alone would
// get, and a batch sent again answers each call as its first run did.
// Config.DisableCoalescing sends each call on its own.
//
// Payloads are binary-safe, up to MaxPayload bytes. A queue's keys carry
// the package's name inside its Key's hash tag ("{jobs}/delayqueue" and
// keys beside it, for a Key "jobs"; see Config.Key), so they share one
// Redis Cluster hash slot and no other package's keys for the same Key.
// A queue without messages leaves no keys, but for the registry of
// waiting consumers, which lapses 3 seconds after the last one stops
// waiting, and the record of each Cancel, which lapses a minute after it. A key of another type fails the calls that use it with
// WRONGTYPE, before they write anything, and is left as it was.
//
// # Failovers and moving slots
//
// On a Redis Cluster, every call follows the Cluster as it changes: a
// redirect is followed, and a slot in the middle of a move is tried again
// until the call's context ends. Replication is asynchronous: an
// operator's CLUSTER FAILOVER loses nothing, since the replica catches up
// first, but a forced takeover can lose the last writes the old master
// acknowledged: a message pushed there is lost, and an ack or a delete
// made there is undone, so the message is delivered again.
package delayqueue
