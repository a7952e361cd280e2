package kernel

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/hashtag"
	"github.com/slotlimit/slotlimit/internal/observe"
	"github.com/slotlimit/slotlimit/internal/script"
)

// DefaultReplicaTimeout is the ReplicaTimeout of a Config that sets
// Replicas and leaves ReplicaTimeout 0.
const DefaultReplicaTimeout = time.Second

// Settings are what New takes from every package's Config.
type Settings struct {
	// Keyed says that the package keeps its data at Key, with the names
	// beside it that Sides end in (see hashtag.Names); a package whose
	// calls name their keys (ratelimit, redpacket) leaves all three zero.
	Keyed bool
	Key   string
	Sides []string

	// Replicas and ReplicaTimeout are those of the Config of a package
	// that writes; a package that does not leaves them 0.
	Replicas       int
	ReplicaTimeout time.Duration

	Observer observe.Observer
}

// A Base is what every value made by a package's New holds, and each of
// its calls uses: the client, the runner of its writes, the Observer and
// the error set, and its key with the names beside it.
type Base struct {
	Client   redis.UniversalClient
	Runner   script.Runner // writes, acknowledged by Replicas
	Observer observe.Observer
	Errs     *Errors

	// Key is Settings.Key; Keys is Key followed by the names beside it,
	// one for each of Settings.Sides, in order.
	Key  string
	Keys []string

	// ReplicaTimeout is Settings.ReplicaTimeout, DefaultReplicaTimeout
	// when Replicas is set and it is 0.
	ReplicaTimeout time.Duration
}

// New checks client and s as every package's New does, and returns the
// Base of a value made with them. Its errors match e.InvalidConfig and
// name what is wrong: a nil client (untyped, or a typed nil pointer); an
// empty Key (when s.Keyed), a Key with a '}'
// but no hash tag, or one that a package of the module keeps beside
// another key (KeyFault); a negative Replicas, a negative ReplicaTimeout
// or one above 0 but under a millisecond, which WAIT cannot count.
func (e *Errors) New(client redis.UniversalClient, s Settings) (Base, error) {
	if script.IsNil(client) {
		return Base{}, e.Config("client is nil")
	}
	if s.Keyed {
		if fault := KeyFault(s.Key); fault != "" {
			return Base{}, e.Config("Key %q %s", s.Key, fault)
		}
	}
	switch {
	case s.Replicas < 0:
		return Base{}, e.Config("Replicas is %d, must not be negative", s.Replicas)
	case s.ReplicaTimeout < 0:
		return Base{}, e.Config("ReplicaTimeout is %v, must not be negative", s.ReplicaTimeout)
	case s.ReplicaTimeout > 0 && s.ReplicaTimeout < time.Millisecond:
		// WAIT counts in ms, and takes 0 as "for ever".
		return Base{}, e.Config("ReplicaTimeout is %v, must be at least 1ms", s.ReplicaTimeout)
	}
	timeout := s.ReplicaTimeout
	if s.Replicas > 0 && timeout == 0 {
		timeout = DefaultReplicaTimeout
	}
	b := Base{
		Client: client,
		Runner: script.Runner{Client: client, Replicas: s.Replicas,
			ReplicaTimeout: timeout, NotReplicated: e.NotReplicated},
		Observer:       s.Observer,
		Errs:           e,
		Key:            s.Key,
		ReplicaTimeout: timeout,
	}
	if s.Keyed {
		b.Keys, _ = hashtag.Names(s.Key, s.Sides...)
	}
	return b, nil
}

// KeyFault returns why key cannot hold a package's data, as words that
// follow the key in an error, or "" when it can: it is empty, it has a
// '}' but no hash tag (no name beside it can share its hash slot), or it
// is the name of a key that a package of the module keeps beside another
// key (see hashtag.Owner), which would meet that package's data; the
// words name the package and that key: `is one that package lock keeps
// beside the key "{orders}"`.
func KeyFault(key string) string {
	if key == "" {
		return "is empty"
	}
	if !hasSides(key) {
		return "has a '}' but no hash tag"
	}
	pkg, beside, owned := hashtag.Owner(key)
	switch {
	case !owned:
		return ""
	case beside == "":
		return fmt.Sprintf("is one that package %s keeps beside another key", pkg)
	}
	return fmt.Sprintf("is one that package %s keeps beside the key %q", pkg, beside)
}

func hasSides(key string) bool {
	_, ok := hashtag.SidePrefix(key)
	return ok
}

// Usable reports whether b was made by New: a zero Base, a zero value's,
// was not.
func (b *Base) Usable() bool { return b.Client != nil }

// Begin starts the report to the Observer of a call of method on key by
// holder, of units under limit (0 when not known): one report per call,
// which the call ends with one of the Call's final events.
func (b *Base) Begin(method, key, holder string, units, limit int64) observe.Call {
	return observe.Begin(b.Observer, b.Errs.pkg, method, key, holder, units, limit)
}

// Duration returns the error of a Config's duration field d, named field,
// that is negative, above 0 but under a millisecond (the scripts count
// ms), or above most; nil when it is none of these. 0, which means a
// default, is always accepted.
func (e *Errors) Duration(field string, d, most time.Duration) error {
	switch {
	case d < 0:
		return e.Config("%s is %v, must not be negative", field, d)
	case d > 0 && d < time.Millisecond:
		return e.Config("%s is %v, must be at least 1ms", field, d)
	case d > most:
		return e.Config("%s is %v, must be at most %v", field, d, most)
	}
	return nil
}
