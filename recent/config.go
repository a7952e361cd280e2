package recent

import (
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/observe"
)

// Bounds of a Config, which New enforces so that every number a script
// takes is exact in Lua's numbers and in Redis, and no call can fail on
// one half-way.
const (
	// MaxItems is the largest Config.Max, 2^53-1: the largest count that
	// Lua's numbers hold exactly.
	MaxItems = 1<<53 - 1

	// MaxDuration is the longest Config.TTL and Config.MaxAge, 2^32
	// seconds (about 136 years). A score is a time in microseconds below
	// 2^53, exact in Lua's numbers; so is a time MaxDuration before it,
	// which is how far back MaxAge reaches.
	MaxDuration = 1 << 32 * time.Second
)

// Config describes one list.
type Config struct {
	// Key names the list, e.g. "recent:" + userID. Required. The list is
	// one sorted set whose Redis key is Key with the name "recent" added
	// in Key's Redis Cluster hash slot: a Key with a hash tag gets
	// ":recent" ("{user:42}:views" keeps its items at
	// "{user:42}:views:recent"), and any other Key becomes the hash tag
	// ("recent:42" keeps them at "{recent:42}/recent"). So a list never
	// reads or changes what another package of this module keeps at the
	// same Key. A Key with a '}' but no hash tag, which no such name can
	// share a slot with, is refused, and so is a Key that another package
	// of the module keeps beside another key, such as "{k}/ratelimit".
	Key string

	// Max is the most items the list keeps: an Add that would make more
	// drops the oldest, in the same step. At least 1 and at most
	// MaxItems.
	Max int64

	// TTL is how long the whole list lives after its last Add, on the
	// server's clock, to the millisecond. 0 means it never lapses: Add
	// then sets no expiry (see MaxAge, which sets one of its own). At
	// most MaxDuration.
	TTL time.Duration

	// MaxAge is how old an item may grow, from its last Add, on the
	// server's clock, to the millisecond: older items are never read, and
	// the next Add or Remove deletes them. 0 means items never age out.
	// With MaxAge, a list also lapses MaxAge after its last Add (or after
	// its TTL, when that is shorter), since all its items are too old by
	// then. At most MaxDuration.
	MaxAge time.Duration

	// Observer, if set, is told of the outcome of each Add and Remove
	// that is sent, as one final Event of package "recent": Done, with
	// Units the values added or the values Remove counted, or Error, with
	// Err and Units the values given. Items and Len, which write nothing,
	// report nothing, nor does a call refused before anything is sent
	// (invalid input, no values, a ctx that had ended when it was made).
	// A call whose ctx ends while it waits to go with others (see
	// DisableCoalescing) reports its Error. A nil Observer costs nothing.
	Observer observe.Observer

	// DisableCoalescing sends each Add and Remove to Redis as its own
	// script call. By default, concurrent Adds of at most 4 values each,
	// made through the same List, share one script call, which runs them
	// in turn in the order they were made, and so do such Removes; each
	// caller gets its own result, error and Observer event, as it would
	// alone.
	DisableCoalescing bool
}

// check returns the error of a Max, TTL or MaxAge that New refuses, or
// nil; New checks the client and the Key.
func (c Config) check() error {
	if c.Max < 1 || c.Max > MaxItems {
		return errs.Config("Max is %d, must be 1 to %d", c.Max, int64(MaxItems))
	}
	if err := errs.Duration("TTL", c.TTL, MaxDuration); err != nil {
		return err
	}
	return errs.Duration("MaxAge", c.MaxAge, MaxDuration)
}

// expiry is the expiry an Add gives the list: the TTL, or MaxAge and a
// millisecond (an item exactly MaxAge old is still kept) when that is
// shorter or there is no TTL; 0 for none.
func (c Config) expiry() time.Duration {
	e := c.TTL
	if c.MaxAge > 0 && (e == 0 || c.MaxAge+time.Millisecond < e) {
		e = c.MaxAge + time.Millisecond
	}
	return e
}

// String describes the list, e.g. `"recent:42" recent list, max 50, TTL 720h0m0s, max age 0s`.
func (c Config) String() string {
	return strconv.Quote(c.Key) + " recent list, max " + strconv.FormatInt(c.Max, 10) +
		", TTL " + c.TTL.String() + ", max age " + c.MaxAge.String()
}
