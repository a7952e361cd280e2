package slotlimit

import (
	"strconv"
	"strings"
)

// sideSuffixes are the suffixes of the keys beside a lease set, after
// its separator; the full marker's is followed by the limit's digits.
var sideSuffixes = [...]string{"w", "q", "qd", "qw"}

const fullSuffix = "full:"

// isSideKey reports whether key could be a key beside another Limiter's
// lease set (see keyNames): it has a hash tag and ends in ':' or '/' and
// a side key's suffix. Such a key is refused, so that no Limiter keeps its
// leases where another keeps its weights, queue or full marker.
func isSideKey(key string) bool {
	if !hasHashTag(key) {
		return false // every side key has one
	}
	for _, suffix := range sideSuffixes {
		if endsWithSide(key, suffix) {
			return true
		}
	}
	digitless := strings.TrimRight(key, "0123456789")
	return len(digitless) < len(key) && endsWithSide(digitless, fullSuffix)
}

// endsWithSide reports whether key ends in either separator and suffix.
func endsWithSide(key, suffix string) bool {
	return strings.HasSuffix(key, ":"+suffix) || strings.HasSuffix(key, "/"+suffix)
}

// keyNames returns the names of the keys a Limiter of limit keeps beside
// its lease set at key (weights; the full marker; queue, queue deadlines,
// queue wants) and of its notice channel, all in key's Redis Cluster hash
// slot. A key with a hash tag keeps it and gains a suffix after ':', as
// "{tenant}:ar:1:w"; any other key becomes the hash tag and gains a suffix
// after '/', as "{ar:1}/w". The two forms never meet, so "{x}" and "x" keep
// apart. The full marker's name carries the limit, as "{ar:1}/full:60",
// since it says that this many units are in use. keyNames reports false
// for a key that has a '}' but no hash tag, since no tag can then
// reproduce its slot.
func keyNames(key string, limit int64) (aux [5]string, channel string, ok bool) {
	var prefix string
	switch {
	case hasHashTag(key):
		prefix = key + ":"
	case strings.IndexByte(key, '}') >= 0:
		return aux, "", false
	default:
		prefix = "{" + key + "}/"
	}
	full := prefix + fullSuffix + strconv.FormatInt(limit, 10)
	return [5]string{prefix + "w", full, prefix + "q", prefix + "qd", prefix + "qw"}, prefix + "free", true
}

// hasHashTag reports whether key has a non-empty {...} section, the part
// Redis Cluster hashes instead of the whole key.
func hasHashTag(key string) bool {
	open := strings.IndexByte(key, '{')
	return open >= 0 && strings.IndexByte(key[open+1:], '}') > 0
}
