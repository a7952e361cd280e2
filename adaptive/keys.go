package adaptive

import "github.com/slotlimit/slotlimit/internal/hashtag"

// Every key of a Limiter lives beside Config.Key, in its Redis Cluster
// hash slot, and carries the package's name after the separator of the
// names beside it: "{k}/adaptive" (the limit) and "{k}/adaptive:leases"
// beside a key k without a hash tag, "{t}:x:adaptive" beside "{t}:x".
// Nothing is kept at Config.Key itself, so a Limiter never meets the data
// of another package given the same key.
const sidePrefix = "adaptive"

// sideSuffixes are the suffixes of the keys beside a Limiter's key, in
// the order of the key constants below.
var sideSuffixes = [...]string{
	sidePrefix,             // state
	sidePrefix + ":leases", // leases
	sidePrefix + ":q",      // queue
	sidePrefix + ":qd",     // queue deadlines
	sidePrefix + ":qw",     // queue wants
	sidePrefix + ":free",   // the notice channel
}

// The keys of a Limiter, in the order its scripts take them.
const (
	keyState          = iota // hash: limit, down, up (see scripts/lib.lua)
	keyLeases                // sorted set, holder -> lease deadline (ms)
	keyQueue                 // sorted set, waiting holder -> arrival number
	keyQueueDeadlines        // sorted set, waiting holder -> when its entry lapses
	keyQueueWants            // hash, waiting holder -> '1:lease ms'
	numKeys
)

// keyNames returns the keys beside key, in the order above, and the
// notice channel, all in key's hash slot, or false for a key that has a
// '}' but no hash tag.
func keyNames(key string) (keys []string, channel string, ok bool) {
	names, ok := hashtag.Names(key, sideSuffixes[:]...)
	if !ok {
		return nil, "", false
	}
	return names[1 : 1+numKeys], names[1+numKeys], true
}

// isSideKey reports whether key is a key that a package of the module
// keeps beside another key, this one's included.
func isSideKey(key string) bool {
	return hashtag.Owned(key) || hashtag.IsSideOfAny(key, sideSuffixes[:]...)
}
