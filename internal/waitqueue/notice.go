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

// A Handed is what a release's notice tells the waiter it handed to:
// '+deadline ms:value:arrival number:name'. The release hands it what it
// waited for, held for the claim time, and the waiter claims it until
// Deadline. Value is the primitive's own: the units in use for the
// limiter, the fence for the lock.
type Handed struct {
	Deadline time.Time
	Value    int64
	arrival  int64  // the queue entry served
	name     string // the waiter's name
}

// Name returns the waiter a notice names, as notice.Site.Join wants it.
func Name(payload string) (string, bool) {
	h, ok := parseHanded(payload)
	return h.name, ok
}

// parseHanded reads a notice '+deadline ms:value:arrival number:name'.
func parseHanded(payload string) (Handed, bool) {
	rest, ok := strings.CutPrefix(payload, "+")
	var fields [3]int64
	for i := range fields {
		var field string
		var found bool
		field, rest, found = strings.Cut(rest, ":")
		n, err := strconv.ParseInt(field, 10, 64)
		ok = ok && found && err == nil
		fields[i] = n
	}
	if !ok {
		return Handed{}, false
	}
	return Handed{Deadline: time.UnixMilli(fields[0]), Value: fields[1], arrival: fields[2], name: rest}, true
}
