package hashtag_test

import (
	"testing"

	"github.com/slotlimit/slotlimit/internal/hashtag"
)

// Owner names the package that keeps a name beside another key, and that
// key, as its package would be given it; "" for the key when no key keeps
// exactly that name. It agrees with Owned.
func TestOwner(t *testing.T) {
	for _, tc := range []struct{ key, pkg, beside string }{
		{"{orders}:lock", "lock", "{orders}"},
		{"{orders}/lock", "lock", "orders"},
		{"{k}/lock:q", "lock", "k"}, // the lock's queue, not a Limiter's beside "{k}/lock"
		{"{t}:x:lock:q", "lock", "{t}:x"},
		{"{k}/recent", "recent", "k"},
		{"{t}:jobs:delayqueue:dead", "delayqueue", "{t}:jobs"},
		{"{user:42}/ratelimit", "ratelimit", "user:42"},
		{"{p:0}:redpacket:log", "redpacket", "{p:0}"},
		{"{k}/adaptive:leases", "adaptive", "k"},
		{"{ar:1}/w", "slotlimit", "ar:1"},
		{"{t}:k:qd", "slotlimit", "{t}:k"},
		{"{k}/limit", "slotlimit", "k"},
		{"{ar:1}/full:60", "slotlimit", "ar:1"},
		{"{k}/released:abc", "slotlimit", "k"},
		{"{t}:k:released:abc", "slotlimit", "{t}:k"},
		{"x:lock:{t}", "lock", ""},     // owned, though no key keeps it beside itself
		{"{a}b/lock", "lock", ""},      // "{a}b" has a tag: its names go on with ':'
		{"{{a}}/recent", "recent", ""}, // "{a}" has a tag: its names go on with ':'
		{"ar:0571", "", ""},
		{"{k}/limits", "", ""},
		{"{k}/free", "", ""},
		{"k/recent", "", ""},
	} {
		pkg, beside, ok := hashtag.Owner(tc.key)
		if pkg != tc.pkg || beside != tc.beside || ok != (tc.pkg != "") {
			t.Errorf("Owner(%q) = %q, %q, %v; want %q, %q, %v", tc.key, pkg, beside, ok, tc.pkg, tc.beside, tc.pkg != "")
		}
		if ok != hashtag.Owned(tc.key) {
			t.Errorf("Owner(%q) says %v, Owned %v", tc.key, ok, !ok)
		}
		if beside != "" {
			if prefix, _ := hashtag.SidePrefix(beside); len(tc.key) <= len(prefix) || tc.key[:len(prefix)] != prefix {
				t.Errorf("Owner(%q): %q is not beside %q", tc.key, tc.key, beside)
			}
		}
	}
}
