package slotlimit

import "strings"

// keyNames returns the names of the keys a Limiter keeps beside its lease
// set at key (weights; queue, queue deadlines, queue wants; the full
// marker) and of its notice channel, all in key's Redis Cluster hash slot. A key with a hash
// tag keeps it and gains a suffix after ':', as "{tenant}:ar:1:w"; any
// other key becomes the hash tag and gains a suffix after '/', as
// "{ar:1}/w". The two forms never meet, so "{x}" and "x" keep apart. It
// reports false for a key that has a '}' but no hash tag, since no tag can
// then reproduce its slot.
func keyNames(key string) (aux [5]string, channel string, ok bool) {
	var prefix string
	switch {
	case hasHashTag(key):
		prefix = key + ":"
	case strings.IndexByte(key, '}') >= 0:
		return aux, "", false
	default:
		prefix = "{" + key + "}/"
	}
	return [5]string{prefix + "w", prefix + "q", prefix + "qd", prefix + "qw", prefix + "full"}, prefix + "free", true
}

// hasHashTag reports whether key has a non-empty {...} section, the part
// Redis Cluster hashes instead of the whole key.
func hasHashTag(key string) bool {
	open := strings.IndexByte(key, '{')
	return open >= 0 && strings.IndexByte(key[open+1:], '}') > 0
}
