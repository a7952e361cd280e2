package lock

import "github.com/slotlimit/slotlimit/internal/hashtag"

// The lock itself is the string at Config.Key, the layout redislock,
// redsync and the classic SET NX PX scripts share. Every other key of a
// Mutex carries the package's name, "lock:", after the separator of the
// names beside Config.Key in its hash slot: "{k}/lock:q" beside a key k
// without a hash tag, "{t}:x:lock:q" beside "{t}:x". So no other package
// given the same key meets them, and New refuses them as a lock's Key.
const sidePrefix = "lock:"

// sides are the suffixes of the names beside a lock, in the order of the
// key constants below: its waiting queue, which exists only while someone
// waits, and then the notice channel.
var sides = []string{sidePrefix + "q", sidePrefix + "qd", sidePrefix + "qw", sidePrefix + "free"}

// The keys of a Mutex, in the order its scripts take them; the notice
// channel follows them in Base.Keys.
const (
	keyLock           = iota // the owner's token, with a PX expiry
	keyQueue                 // sorted set, waiting token -> arrival number
	keyQueueDeadlines        // sorted set, waiting token -> when its entry lapses
	keyQueueWants            // hash, waiting token -> '1:lease ms'
	numKeys
)

// keyNames returns the names of the lock at key: the key, the keys above
// and the notice channel, or false for a key with a '}' but no hash tag.
func keyNames(key string) ([]string, bool) {
	return hashtag.Names(key, sides...)
}
