package delayqueue

import "github.com/slotlimit/slotlimit/internal/hashtag"

// suffix is the name the queue's keys carry, after the Key: the queue's
// sorted set is Key + ":delayqueue" for a Key with a hash tag, and
// "{" + Key + "}/delayqueue" for any other (so that "x" and "{x}" keep
// apart), and its other keys add their own suffix to that. So every key of a queue is in its Key's Redis
// Cluster hash slot, and no key of another package's (a Limiter's, a
// recent list's) given the same Key is one of them.
const suffix = "delayqueue"

// The keys of a Queue, in the order its scripts take them (see
// scripts/lib.lua).
const (
	keyQueue    = iota // sorted set, order key, id and deliveries -> due time (ms)
	keyLeases          // sorted set, 'token id' -> lease deadline (ms)
	keyBodies          // hash, id -> payload; token -> 'due attempt id'
	keyAttempts        // hash, id -> deliveries, of each dead letter
	keyDead            // sorted set, id -> when it was dead-lettered (ms)
	keyWaiters         // sorted set, consumer -> registration deadline (ms)
	keyInfo            // hash: the last push's order number, the next event and its keeper
	numKeys
)

// sideSuffixes are the suffixes of the queue's other keys, after its
// sorted set's name and ':'.
var sideSuffixes = [numKeys]string{
	keyLeases: "leases", keyBodies: "bodies", keyAttempts: "attempts",
	keyDead: "dead", keyWaiters: "waiters", keyInfo: "info",
}

// keyNames returns the keys of the queue at key, in the order above, and
// its notice channel, all in key's Redis Cluster hash slot, or false for a
// key that has a '}' but no hash tag, whose slot no tag can reproduce.
func keyNames(key string) (keys []string, channel string, ok bool) {
	prefix, ok := hashtag.SidePrefix(key)
	if !ok {
		return nil, "", false
	}
	base := prefix + suffix
	keys = make([]string, numKeys)
	keys[keyQueue] = base
	for i := keyLeases; i < numKeys; i++ {
		keys[i] = base + ":" + sideSuffixes[i]
	}
	return keys, base + ":wake", true
}
