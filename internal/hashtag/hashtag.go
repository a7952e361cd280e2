// Package hashtag names the keys that live beside a key in its Redis
// Cluster hash slot, so that one script can use them all.
//
// A key with a hash tag keeps it: the names beside it are the key, ':'
// and a suffix, as "{tenant}:ar:1:w". Any other key becomes the hash tag:
// the names beside it are the key in braces, '/' and a suffix, as
// "{ar:1}/w". The two forms never meet, so the keys beside "{x}" and "x"
// keep apart. A key with a '}' but no hash tag has no names beside it,
// since no tag can reproduce its slot.
package hashtag

import "strings"

// Has reports whether key has a non-empty {...} section, the part Redis
// Cluster hashes instead of the whole key.
func Has(key string) bool {
	open := strings.IndexByte(key, '{')
	return open >= 0 && strings.IndexByte(key[open+1:], '}') > 0
}

// SidePrefix returns the prefix of the names beside key, to which each
// name adds its suffix: key + ":" when key has a hash tag, and
// "{" + key + "}/" when it has none. It reports false for a key that has
// a '}' but no hash tag.
func SidePrefix(key string) (prefix string, ok bool) {
	switch {
	case Has(key):
		return key + ":", true
	case strings.IndexByte(key, '}') >= 0:
		return "", false
	}
	return "{" + key + "}/", true
}

// IsSide reports whether key could be the name beside some other key
// that ends in suffix: whether it has a hash tag, as every such name has,
// and ends in ':' or '/' and suffix. A package refuses such a key as a key
// of its own, so that no key is both one package value's key and a name
// beside another's.
func IsSide(key, suffix string) bool {
	return Has(key) && (strings.HasSuffix(key, ":"+suffix) || strings.HasSuffix(key, "/"+suffix))
}

// Names returns key followed by the name beside it with each of suffixes,
// in order. It reports false for a key that has a '}' but no hash tag.
func Names(key string, suffixes ...string) ([]string, bool) {
	prefix, ok := SidePrefix(key)
	if !ok {
		return nil, false
	}
	names := make([]string, 0, 1+len(suffixes))
	names = append(names, key)
	for _, suffix := range suffixes {
		names = append(names, prefix+suffix)
	}
	return names, true
}

// IsSideOfAny reports whether key could be the name beside some other key
// with any of suffixes (see IsSide).
func IsSideOfAny(key string, suffixes ...string) bool {
	for _, suffix := range suffixes {
		if IsSide(key, suffix) {
			return true
		}
	}
	return false
}

// Packages are the names the module's packages give the keys they keep
// beside a key (see SidePrefix), after which a key of theirs may go on
// with ':' and more: a recent list "{k}/recent", a delay queue's
// "{k}/delayqueue:leases", a GCRA time "{k}/ratelimit", a lock's queue
// "{k}/lock:q", a red packet's "{redpacket:0}:redpacket:log", an
// adaptive limit's "{k}/adaptive:leases".
var Packages = []string{"recent", "delayqueue", "ratelimit", "lock", "redpacket", "adaptive"}

// LimiterSides are the names of the keys a slotlimit.Limiter keeps
// beside its lease set: weights, queue, queue deadlines, queue wants, the
// refusal counter, and the record of its settings (a Counter's too). Its
// full marker is "full:" and the limit's digits, and a Counter's release
// records "released:" and an ID.
var LimiterSides = []string{"w", "q", "qd", "qw", "refused", "limit"}

// Owned reports whether key is the name of a key that a package of the
// module keeps beside another key: whether it has a hash tag, as every
// such name has, and holds ':' or '/' and a package's name, at the end or
// before a ':', or ends in ':' or '/' and one of LimiterSides, a full
// marker's name or a release record's. A package that keeps data at the
// key it is given refuses such a key, so that it never reads or changes
// another package's data. Owner says which package, and beside which key.
func Owned(key string) bool {
	_, _, ok := Owner(key)
	return ok
}

// Owner returns, for a key that Owned reports, the package that keeps a
// name such as key beside another key, and that key: "lock" and
// "{orders}" for "{orders}:lock", "slotlimit" and "ar:1" for "{ar:1}/w".
// A package's name in key is taken before a Limiter's name at its end, so
// "{k}/lock:q" is the lock's, beside "k". beside is "" when no key has
// exactly that name beside it (as for "x:lock:{t}"), which Owned refuses
// all the same. ok is false, and the others "", when Owned is false.
func Owner(key string) (pkg, beside string, ok bool) {
	if !Has(key) {
		return "", "", false
	}
	for _, pkg := range Packages {
		for _, sep := range []string{":", "/"} {
			name := sep + pkg
			for off := 0; ; {
				i := strings.Index(key[off:], name)
				if i < 0 {
					break
				}
				after := key[off+i+len(name):]
				if after == "" || after[0] == ':' {
					return pkg, keyOf(key[:off+i+1]), true
				}
				off += i + 1
			}
		}
	}
	for _, suffix := range LimiterSides {
		if IsSide(key, suffix) {
			return "slotlimit", keyOf(key[:len(key)-len(suffix)]), true
		}
	}
	if digitless := strings.TrimRight(key, "0123456789"); len(digitless) < len(key) && IsSide(digitless, "full:") {
		return "slotlimit", keyOf(strings.TrimSuffix(digitless, "full:")), true
	}
	for _, sep := range []string{":", "/"} {
		if i := strings.Index(key, sep+"released:"); i >= 0 {
			return "slotlimit", keyOf(key[:i+1]), true
		}
	}
	return "", "", false
}

// keyOf returns the key whose names beside it begin with prefix (one
// ending in ':' or '/'): the one key whose SidePrefix is prefix, else "".
func keyOf(prefix string) string {
	key := prefix[:len(prefix)-1]
	if strings.HasSuffix(prefix, "/") && strings.HasPrefix(key, "{") && strings.HasSuffix(key, "}") {
		key = key[1 : len(key)-1]
	}
	if p, ok := SidePrefix(key); ok && p == prefix {
		return key
	}
	return ""
}
