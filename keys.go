package slotlimit

import "strconv"

// Endings of the names that a Limiter keeps beside its key that more than
// one place needs: the full marker's (which goes on with the limit), the
// queue wants', the refusal counter's and the settings record's (a
// Counter's too).
const (
	fullSuffix       = "full:"
	queueWantsSuffix = "qw"
	refusedSuffix    = "refused"
	recordSuffix     = "limit"
)

// The places in Base.Keys, after the keys the scripts take (keyLeases to
// keyQueueWants), of a Limiter's notice channel, its refusal counter
// (Config.CountRefusals) and its settings record.
const (
	keyChannel = numKeys + iota
	keyRefused
	keyRecord
)

// limiterSides returns the endings of the names a Limiter of limit keeps
// beside its key, in the order of Base.Keys after the key: "{tenant}:ar:1:w"
// beside a key with a hash tag, "{ar:1}/w" beside any other. The full
// marker's name carries the limit, as "{ar:1}/full:60", since it says
// that this many units are in use.
func limiterSides(limit int64) []string {
	return []string{"w", fullSuffix + strconv.FormatInt(limit, 10), "q", "qd", queueWantsSuffix, "free", refusedSuffix, recordSuffix}
}
