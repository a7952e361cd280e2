package ratelimit

import "github.com/slotlimit/slotlimit/internal/hashtag"

// suffix names this package's data beside a user's key: a GCRA limit on
// "{tenant}:x" keeps its time at "{tenant}:x:ratelimit", one on "x" at
// "{x}/ratelimit", in the key's hash slot, so that it never meets another
// package's data at the key itself. A FixedWindow keeps its count at the
// key itself, the layout of the classic INCR-and-EXPIRE script.
const suffix = "ratelimit"

// dataKey returns the Redis key that limit's algorithm keeps key's data
// at, or an error matching ErrInvalidKey.
func dataKey(key string, algorithm Algorithm) (string, error) {
	switch {
	case key == "":
		return "", invalid(ErrInvalidKey, "the key is empty")
	case hashtag.Owned(key):
		return "", invalid(ErrInvalidKey, "the key is one that a package of this module keeps beside another key")
	case algorithm != GCRA:
		return key, nil
	}
	prefix, ok := hashtag.SidePrefix(key)
	if !ok {
		return "", invalid(ErrInvalidKey, "the key has a '}' but no hash tag")
	}
	return prefix + suffix, nil
}
