package delayqueue

// The keys of a Queue, in the order its scripts take them (see
// scripts/lib.lua). Each is a name beside the Key, in its Redis Cluster
// hash slot, that carries the package's name: "{jobs}/delayqueue",
// "{jobs}/delayqueue:leases", ... for a Key "jobs", "{t}:jobs:delayqueue"
// and so on for a Key with a hash tag "{t}:jobs". So no key of another
// package's given the same Key (a Limiter's, a recent list's) is one of
// them, and nothing is kept at the Key itself.
const (
	keyQueue    = iota // sorted set, order key, id and deliveries -> due time (ms)
	keyLeases          // sorted set, 'token id' -> lease deadline (ms)
	keyBodies          // hash, id -> payload; token -> 'due attempt id'
	keyAttempts        // hash, id -> deliveries, of each dead letter
	keyDead            // sorted set, id -> when it was dead-lettered (ms)
	keyWaiters         // sorted set, consumer -> registration deadline (ms)
	keyInfo            // hash: the last push's order number, the next event and its keeper
	keyPushes          // hash, id -> push token, of each message whose ID its caller gave
	numKeys
)

// sides are the names of the queue's keys beside its Key, in the order
// above, and last its notice channel's.
var sides = [numKeys + 1]string{
	keyQueue: "delayqueue", keyLeases: "delayqueue:leases", keyBodies: "delayqueue:bodies",
	keyAttempts: "delayqueue:attempts", keyDead: "delayqueue:dead", keyWaiters: "delayqueue:waiters",
	keyInfo: "delayqueue:info", keyPushes: "delayqueue:pushes", numKeys: "delayqueue:wake",
}
