package delayqueue

import "github.com/slotlimit/slotlimit/internal/hashtag"

// sideSuffixes are the suffixes of the keys beside a queue's Key, after
// the separator hashtag.SidePrefix gives, in the order of the keys below.
var sideSuffixes = [...]string{"leases", "bodies", "attempts", "dead", "waiters", "info"}

// The keys of a Queue, in the order its scripts take them (see
// scripts/lib.lua).
const (
	keyQueue    = iota // sorted set, id -> due time (ms)
	keyLeases          // sorted set, id -> lease deadline (ms)
	keyBodies          // hash, id -> payload
	keyAttempts        // hash, id -> deliveries so far
	keyDead            // sorted set, id -> when it was dead-lettered (ms)
	keyWaiters         // sorted set, consumer -> registration deadline (ms)
	keyInfo            // hash: the last id, the next event and its keeper
	numKeys
)

// keyNames returns the keys of the queue at key, in the order above, and
// its notice channel, all in key's Redis Cluster hash slot, or false for a
// key that has a '}' but no hash tag.
func keyNames(key string) (keys []string, channel string, ok bool) {
	names, ok := hashtag.Names(key, append(sideSuffixes[:], "wake")...)
	if !ok {
		return nil, "", false
	}
	return names[:numKeys], names[numKeys], true
}

// isSideKey reports whether key could be a key beside another queue.
func isSideKey(key string) bool {
	return hashtag.IsSideOfAny(key, sideSuffixes[:]...)
}
