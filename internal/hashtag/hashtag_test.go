package hashtag_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/slotlimit/slotlimit/internal/hashtag"
)

func TestSidePrefix(t *testing.T) {
	steps := []struct {
		key    string
		tagged bool
		prefix string
		ok     bool
	}{
		{"ar:1", false, "{ar:1}/", true},
		{"{tenant}:ar:1", true, "{tenant}:ar:1:", true},
		{"{x}", true, "{x}:", true},
		{"x", false, "{x}/", true},
		{"p{t}q", true, "p{t}q:", true},
		{"{}x", false, "{{}x}/", false}, // an empty tag is no tag, and the key has a '}'
		{"a}b", false, "", false},
		{"{a", false, "{{a}/", true},
		{"}{a}", true, "}{a}:", true},
	}
	for i, s := range steps {
		assert.Equal(t, s.tagged, hashtag.Has(s.key), "step %d: %q", i, s.key)
		prefix, ok := hashtag.SidePrefix(s.key)
		assert.Equal(t, s.ok, ok, "step %d: %q", i, s.key)
		if ok {
			assert.Equal(t, s.prefix, prefix, "step %d: %q", i, s.key)
		}
	}
}

// Every name SidePrefix gives is one that IsSide reports, and a key
// without a hash tag never is.
func TestIsSide(t *testing.T) {
	for _, key := range []string{"a", "{a}", "{t}:x", "ar:1", "p{t}q"} {
		prefix, ok := hashtag.SidePrefix(key)
		assert.True(t, ok)
		assert.True(t, hashtag.IsSide(prefix+"w", "w"), "%q", prefix+"w")
		assert.False(t, hashtag.IsSide(prefix+"w", "q"), "%q", prefix+"w")
	}
	for _, key := range []string{"a:w", "a/w", "{}:w", "w"} {
		assert.False(t, hashtag.IsSide(key, "w"), "%q", key)
	}
}

// Owned knows the names every package keeps beside a key, and no other.
func TestOwned(t *testing.T) {
	for key, want := range map[string]bool{
		"{k}/recent":               true,
		"{t}:k:recent":             true,
		"{k}/delayqueue":           true,
		"{k}/delayqueue:leases":    true,
		"{t}:jobs:delayqueue:dead": true,
		"{k}/ratelimit":            true,
		"{k}/lock:q":               true,
		"{k}/lock:free":            true,
		"{k}/w":                    true, // a Limiter's weights
		"{t}:k:qd":                 true, // a Limiter's queue deadlines
		"{k}/full:60":              true, // a Limiter's full marker
		"{k}/released:abc":         true, // a Counter's release record
		"{k}/limit":                true, // a Limiter's or a Counter's settings record
		"{t}:k:limit":              true,
		"{k}/limits":               false,
		"{p:0}:redpacket:log":      true,
		"{k}/adaptive":             true, // an adaptive limit's state
		"{k}/adaptive:leases":      true,
		"{k}/adaptive:free":        true, // its channel's name, refused as a key all the same
		"{t}:k:adaptive":           true,
		"{t}:k:adaptive:qd":        true,
		"{k}/adaptively":           false,
		"{k}/adaptive-x":           false,
		"k/adaptive":               false,
		"{k}/free":                 false, // a channel, not a key
		"{k}/full:":                false,
		"{k}/wq":                   false,
		"k/recent":                 false, // no hash tag: no package names a key so
		"{k}/recently":             false,
		"{k}/recent-pages":         false,
		"{t}:lockers":              false,
		"{k}":                      false,
		"ar:0571":                  false,
	} {
		if got := hashtag.Owned(key); got != want {
			t.Errorf("Owned(%q) = %v, want %v", key, got, want)
		}
	}
}
