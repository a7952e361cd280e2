package ratelimit

import (
	"github.com/slotlimit/slotlimit/internal/hashtag"
	"github.com/slotlimit/slotlimit/internal/kernel"
)

// suffix names this package's data beside a user's key: a GCRA limit on
// "{tenant}:x" keeps its time at "{tenant}:x:ratelimit", one on "x" at
// "{x}/ratelimit", in the key's hash slot, so that it never meets another
// package's data at the key itself. A FixedWindow keeps its count at the
// key itself, the layout of the classic INCR-and-EXPIRE script.
const suffix = "ratelimit"

// dataKey returns the Redis key that algorithm keeps key's data at, or an
// error matching ErrInvalidKey.
func dataKey(key string, algorithm Algorithm) (string, error) {
	fault := kernel.KeyFault(key)
	if algorithm == FixedWindow && key != "" && !hashtag.Has(key) {
		// The one fault such a key can have, a '}' but no hash tag, keeps
		// no name beside it; a FixedWindow counts at the key itself.
		fault = ""
	}
	if fault != "" {
		return "", invalid(ErrInvalidKey, "the key %s", fault)
	}
	if algorithm == FixedWindow {
		return key, nil
	}
	prefix, _ := hashtag.SidePrefix(key)
	return prefix + suffix, nil
}
