package lock

import "github.com/slotlimit/slotlimit/internal/hashtag"

// The lock itself is the string at Config.Key, the layout redislock,
// redsync and the classic SET NX PX scripts share. Every other key of a
// Mutex carries the package's name, "lock:", after the separator of the
// names beside Config.Key in its hash slot: "{k}/lock:q" beside a key k
// without a hash tag, "{t}:x:lock:q" beside "{t}:x". So no other package
// given the same key meets them.
const sidePrefix = "lock:"

// sideSuffixes are the suffixes of the keys beside a lock: its waiting
// queue, which exists only while someone waits.
var sideSuffixes = [...]string{sidePrefix + "q", sidePrefix + "qd", sidePrefix + "qw"}

// channelSuffix names the notice channel beside a lock.
const channelSuffix = sidePrefix + "free"

// The keys of a Mutex, in the order its scripts take them.
const (
	keyLock           = iota // the owner's token, with a PX expiry
	keyQueue                 // sorted set, waiting token -> arrival number
	keyQueueDeadlines        // sorted set, waiting token -> when its entry lapses
	keyQueueWants            // hash, waiting token -> '1:lease ms'
	numKeys
)

// keyNames returns the keys of the lock at key, in the order above, and
// its notice channel, all in key's Redis Cluster hash slot, or false for a
// key that has a '}' but no hash tag.
func keyNames(key string) (keys []string, channel string, ok bool) {
	names, ok := hashtag.Names(key, append(sideSuffixes[:], channelSuffix)...)
	if !ok {
		return nil, "", false
	}
	return names[:numKeys], names[numKeys], true
}

// isSideKey reports whether key could be a key beside another lock.
func isSideKey(key string) bool {
	return hashtag.IsSideOfAny(key, sideSuffixes[:]...)
}
