package adaptive

// Every key of a Limiter lives beside Config.Key, in its Redis Cluster
// hash slot, and carries the package's name after the separator of the
// names beside it: "{k}/adaptive" (the limit) and "{k}/adaptive:leases"
// beside a key k without a hash tag, "{t}:x:adaptive" beside "{t}:x".
// Nothing is kept at Config.Key itself, so a Limiter never meets the data
// of another package given the same key, and New refuses these names as
// a Limiter's Key.
const sidePrefix = "adaptive"

// sides are the suffixes of the names beside a Limiter's key, in the
// order of the key constants below, and then the notice channel.
var sides = []string{
	sidePrefix,             // state
	sidePrefix + ":leases", // leases
	sidePrefix + ":q",      // queue
	sidePrefix + ":qd",     // queue deadlines
	sidePrefix + ":qw",     // queue wants
	sidePrefix + ":free",   // the notice channel
}

// The keys of a Limiter, in the order its scripts take them; in
// Base.Keys, they follow Config.Key, and the notice channel follows them.
const (
	keyState          = iota // hash: limit, down, up (see scripts/lib.lua)
	keyLeases                // sorted set, holder -> lease deadline (ms)
	keyQueue                 // sorted set, waiting holder -> arrival number
	keyQueueDeadlines        // sorted set, waiting holder -> when its entry lapses
	keyQueueWants            // hash, waiting holder -> '1:lease ms'
	numKeys
)
