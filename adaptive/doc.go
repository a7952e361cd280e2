// Package adaptive is a concurrency limit that finds the capacity of the
// system behind it and shares it across every instance of a service, in
// Redis.
//
// A payment gateway, a model server or a partner API accepts "some"
// concurrent calls, and that number moves with the time of day, deploys
// and incidents. Set a fixed limit too high and the system is overloaded;
// too low and capacity is wasted. An adaptive limit learns the number from
// the calls themselves: it grows while calls succeed with the limit in
// use, and shrinks when the system refuses them. In-process adaptive
// limiters do this inside one process, so N instances each learn "their"
// share without knowing of the others, and together overshoot or
// oscillate. Here the limit lives in Redis, and every instance's feedback
// moves the one shared limit.
//
//	limiter, err := adaptive.New(client, adaptive.Config{
//		Key: "payments", Min: 1, Max: 100, Initial: 10,
//	})
//	...
//	slot, err := limiter.Acquire(ctx) // waits for a slot; TryAcquire never does
//	if err != nil {
//		return err
//	}
//	err = gateway.Charge(ctx, order)
//	switch {
//	case err == nil:
//		slot.Success(ctx)
//	case isOverload(err): // refused, timed out, 429, 503
//		slot.Dropped(ctx)
//	default:
//		slot.Ignore(ctx)
//	}
//
// # What it promises
//
//   - At most Limit slots are held at once across every Limiter of the
//     key. When the limit goes down below the slots in use, no slot is
//     granted until enough are freed.
//   - A slot that is never freed (its caller crashed) comes back TTL after
//     it was granted, by the Redis server's clock.
//   - Acquire waits without polling: the call that frees a slot hands it
//     to the first waiter and wakes that waiter alone. A waiter returns a
//     handed slot only while the slot must still be held for it, by the
//     server's clock: one that was stopped or starved across the hand-off
//     (or whose claim waited long for the replicas) tries again, and
//     never returns a slot that lapsed and went to another caller.
//   - It works on Redis Cluster: every key of one limit shares one hash
//     slot.
//   - With Config.Replicas, every write waits until that many replicas
//     have it (Redis WAIT), so a failover to one of them loses no slot a
//     caller was told it holds: a slot the replicas do not acknowledge
//     within Config.ReplicaTimeout is not taken (TryAcquire and Acquire
//     free it, and return ErrNotReplicated). Without it, replication is
//     asynchronous, as Redis's is: a failover can lose the slots taken
//     last, and until their callers free them, as many more calls get in.
//   - Every write takes effect once, however often it is sent: go-redis
//     sends a command again when its reply was lost, and a caller may call
//     again after an error matching ErrOutcomeUnknown. A slot is freed
//     once, and one outcome counted, whatever the number of Success,
//     Dropped and Ignore calls made on it.
//   - A crowd costs Redis little: the tries of TryAcquire and Acquire that
//     callers make through one Limiter while one is in flight go to Redis
//     together, as one script call, and so do the releases of Success,
//     Dropped and Ignore; a lone call is sent at once. Each caller gets
//     the result, error and Observer event its call would get alone, made
//     in turn. A call whose ctx ends while it waits to be sent returns
//     ctx's error and sent nothing; one whose ctx ends while its shared
//     call is in flight returns as a call whose outcome is unknown does (a
//     TryAcquire or Acquire frees what it may have taken, once the shared
//     call is back, up to a second past ctx's end).
//     Config.DisableCoalescing sends each call alone.
//
// # How the limit moves
//
// The limit moves in the same script that frees a slot, on the server's
// clock, as additive increase and multiplicative decrease (AIMD, as TCP
// and the in-process limiters do):
//
//   - Dropped: the limit becomes floor(limit × Factor) (at least one less,
//     never below Min), at most once per Window. A drop of a call that was
//     granted before the last decrease does not count: it was admitted
//     under the old limit, and the decrease answered it already. So a
//     burst of drops from one overload counts once.
//   - Success: while the limit was nearly in use (at most a tenth of it,
//     or one slot, free, or a caller waiting), the limit grows by Step, up
//     to Max, at most once per Window, and not within 5 Windows of a
//     decrease. A limit that is not used is not raised.
//   - Ignore: the limit stays as it is.
//
// A drop that counts also keeps its drop delay, the time from the call's
// grant to its Dropped (up to 20 Windows): how long an overshoot takes to
// show, such as a refused call's timeout; and the peak, the limit before
// it. The limit then holds for at least a drop delay, and near the peak
// (from two Steps below it to one above) it climbs one Step per two drop
// delays (at least a Window): near the capacity it found, each step's
// overshoot shows, and is counted, before the next.
//
// The defaults (Window 50 ms, Step 1, Factor 0.9) follow a capacity that
// moves between 8 and 30 concurrent calls within a few seconds, for calls
// of 5 to 50 ms that fail within a few hundred ms when refused: the limit
// climbs up to 20 slots a second away from the capacity it found, and
// falls from 20 to 8 in about half a second when refused calls fail within
// 50 ms (in about two when they fail within 250 ms). It then runs in a
// narrow saw-tooth around the capacity. Raise Window for calls refused
// after more than a second. BENCHMARKS.md and BENCHMARKS-slow.md show the
// limit following a moving capacity, beside a static limit and
// per-instance limits.
//
// Each Limiter records its Min and Max beside the limit, with one SET on
// its first try for a slot and at most once a minute after that, never on
// every call, so that an operator's tools can read them (Recorded).
//
// # Reading latency
//
// Most systems behind a limit queue rather than refuse: a database, a
// payment gateway, a service behind a load balancer. Past their capacity,
// every call waits longer, and nothing is dropped until the callers' own
// timeouts fire. Config.RTTTolerance makes the limit read that latency
// too. Each Success reports its call's latency, from the slot's grant to
// the Success, on the server's clock, in the script that frees the slot,
// so that every instance's calls feed one estimate: the recent latency (a
// Window's mean) and the no-load latency (the least latency of this and
// the last period of LatencyPeriod windows, so that it follows a system
// whose speed changes). At the end of a Window whose recent latency is
// above RTTTolerance × the no-load latency, the limit goes down, as on a
// drop, to the capacity that latency shows (at most halved), and not
// within 5 Windows of a decrease; while it stays above, successes raise
// nothing. A drop still lowers the limit. In BENCHMARKS-queue.md, with
// RTTTolerance 1.5, a queueing system whose servers go from 20 to 8 to 30
// keeps its calls' p99 at about twice their no-load latency in each phase,
// at 0.88 to 0.96 of the goodput of the same limit on drops alone, which
// lets the queue grow until the p99 is 2 to 9 times the no-load latency.
// Inspect, the Observer (observe.Event.Latency and NoLoadLatency) and the
// otel module report the estimate beside the limit.
//
// # Observing
//
// Config.Observer is told of every call, as in every package of the
// module, and of each move of the limit as an observe.LimitChanged event.
// Limit reads the current limit, and Inspect the limit beside the slots in
// use and the waiters, for dashboards and tools.
package adaptive
