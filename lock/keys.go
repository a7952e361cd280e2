package lock

import "github.com/slotlimit/slotlimit/internal/hashtag"

// sideSuffixes are the suffixes of the keys beside a lock, after the
// separator hashtag.SidePrefix gives: its waiting queue (see
// internal/waitqueue), which exists only while someone waits.
var sideSuffixes = [...]string{"q", "qd", "qw"}

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
	names, ok := hashtag.Names(key, append(sideSuffixes[:], "free")...)
	if !ok {
		return nil, "", false
	}
	return names[:numKeys], names[numKeys], true
}

// isSideKey reports whether key could be a key beside another lock.
func isSideKey(key string) bool {
	return hashtag.IsSideOfAny(key, sideSuffixes[:]...)
}
