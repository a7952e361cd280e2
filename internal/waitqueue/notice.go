package waitqueue

import (
	"strconv"
	"strings"
	"time"

	"github.com/slotlimit/slotlimit/internal/notice"
)

// Notices holds the notice hubs of the queue waiters of this process,
// so that every waiter of a client, the limiter's and the lock's alike,
// shares one subscription. It is a package variable because it must be
// keyed by the client, and a go-redis client has no place to keep it (see
// notice.Registry).
var Notices = notice.NewRegistry()

// A Handed is what a release's notice tells the waiter it handed to. The
// release hands it what it waited for, held through HeldUntil (the claim
// time, or the waiter's lease if shorter, from the hand-off), and the
// waiter claims it until Deadline. Value is the primitive's own: the units
// in use for the limiter, the fence for the lock. Every time is the Redis
// server's.
//
// A notice is written by a script, as
//
//	*handed ms:held until ms:deadline ms:value:arrival number:name
//
// It states when the hand-off ran and how long it holds what it handed,
// so that the waiter trusts it only while that lasts (see Wait.Handed).
type Handed struct {
	Deadline  time.Time
	Value     int64
	HandedAt  time.Time
	HeldUntil time.Time
	arrival   int64  // the queue entry served
	name      string // the waiter's name
}

// Name returns the waiter a notice names, as notice.Site.Join wants it.
func Name(payload string) (string, bool) {
	h, ok := parseHanded(payload)
	return h.name, ok
}

// parseHanded reads a notice (see Handed).
func parseHanded(payload string) (Handed, bool) {
	rest, ok := strings.CutPrefix(payload, "*")
	if !ok {
		return Handed{}, false
	}
	var fields [5]int64
	for i := range fields {
		var field string
		var found bool
		field, rest, found = strings.Cut(rest, ":")
		n, err := strconv.ParseInt(field, 10, 64)
		if !found || err != nil {
			return Handed{}, false
		}
		fields[i] = n
	}
	return Handed{
		HandedAt:  time.UnixMilli(fields[0]),
		HeldUntil: time.UnixMilli(fields[1]),
		Deadline:  time.UnixMilli(fields[2]),
		Value:     fields[3],
		arrival:   fields[4],
		name:      rest,
	}, true
}
