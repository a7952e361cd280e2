package slotlimit

import "strings"

// Suffixes of the keys a Limiter keeps beside Config.Key, and of its
// notice channel. See scripts/lib.lua and scripts/acquire.lua.
const (
	weightsSuffix   = ":w"
	queueSuffix     = ":q"
	deadlinesSuffix = ":qd"
	queueWtSuffix   = ":qw"
	channelSuffix   = ":free"
)

// sameSlotPrefix returns a prefix p such that p+suffix falls in the same
// Redis Cluster hash slot as key, for any suffix. A key with a hash tag
// keeps it; any other key becomes the hash tag. It reports false for a key
// that has a '}' but no hash tag, since no tag can then reproduce its slot.
func sameSlotPrefix(key string) (string, bool) {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if n := strings.IndexByte(key[open+1:], '}'); n > 0 {
			return key, true
		}
	}
	if strings.IndexByte(key, '}') >= 0 {
		return "", false
	}
	return "{" + key + "}", true
}
