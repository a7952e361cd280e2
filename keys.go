package slotlimit

import "strconv"

// The names of the keys a Limiter keeps beside its key, in its Redis
// Cluster hash slot (see kernel.Settings.Sides), and of its notice
// channel, in the order of Base.Keys after the key itself: the keys the
// scripts take (keyLeases to keyQueueWants), then the channel and the
// refusal counter (Config.CountRefusals).
const (
	fullSuffix    = "full:"
	refusedSuffix = "refused"
)

// The places in Base.Keys of a Limiter's notice channel and its refusal
// counter, after the keys the scripts take.
const (
	keyChannel = numKeys + iota
	keyRefused
)

// limiterSides returns the names that the keys beside a Limiter of limit
// end in: "{tenant}:ar:1:w" beside a key with a hash tag, "{ar:1}/w"
// beside any other. The full marker's name carries the limit, as
// "{ar:1}/full:60", since it says that this many units are in use.
func limiterSides(limit int64) []string {
	return []string{"w", fullSuffix + strconv.FormatInt(limit, 10), "q", "qd", "qw", "free", refusedSuffix}
}
