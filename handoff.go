package slotlimit

import (
	"strconv"
	"strings"
	"time"

	"github.com/slotlimit/slotlimit/internal/notice"
)

// hubs holds the notice hub of each client whose Limiters have waiters, so
// that every Limiter of a client shares one subscription. It is a package
// variable because it must be keyed by the client, and a go-redis client
// has no place to keep it (see notice.Registry).
var hubs = notice.NewRegistry()

// A handoff is one wait's place on its Limiter's notice channel. A notice
// names a holder that a release handed units to, and the queue entry it
// served (see scripts/release.lua); it wakes the waiters of that holder
// that wait on that entry, and no others. Its fields are the waiting
// goroutine's alone.
type handoff struct {
	*notice.Waiter
	arrival int64     // the waiter's queue entry, from its last try; 0: none
	trusted time.Time // until when a notice for that entry can be trusted
}

// trustNotices is how long after a try is sent a notice for the queue
// entry it returned is trusted: the lease it hands over lasts the claim
// time, queueTTL, from a moment after that send, so a waiter that reads
// the notice well within it returns at once and its claim, sent then,
// finds the lease live. A later notice is checked with a try.
const trustNotices = queueTTL - time.Second

// join adds a waiter for holder on l's notice channel. It must Leave.
func (l *Limiter) join(holder string) *handoff {
	return &handoff{Waiter: l.notices.Join(l.channel, holder, noticeHolder)}
}

// queued records the queue entry the waiter's last try, sent at sent,
// returned, so that a notice for that entry wakes it, even one that came
// first.
func (h *handoff) queued(arrival int64, sent time.Time) {
	h.arrival, h.trusted = arrival, sent.Add(trustNotices)
	if arrival == 0 {
		h.Expect(nil)
		return
	}
	h.Expect(func(payload string) bool {
		_, handedTo, _, ok := parseHanded(payload)
		return ok && handedTo == arrival
	})
}

// handedLease returns the lease a release handed the waiter's queue entry,
// if one did and the notice can still be trusted.
func (h *handoff) handedLease() (Result, bool) {
	payload, ok := h.Last()
	if !ok || h.arrival == 0 || !time.Now().Before(h.trusted) {
		return Result{}, false
	}
	_, handedTo, res, ok := parseHanded(payload)
	return res, ok && handedTo == h.arrival
}

// noticeHolder returns the holder a notice names.
func noticeHolder(payload string) (string, bool) {
	holder, _, _, ok := parseHanded(payload)
	return holder, ok
}

// parseHanded reads a notice '+deadline ms:units in use:arrival number:holder',
// where the deadline is the one the waiter claims the lease for.
func parseHanded(payload string) (holder string, arrival int64, res Result, ok bool) {
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
		return "", 0, Result{}, false
	}
	return rest, fields[2], Result{Acquired: true, Count: fields[1], ExpiresAt: time.UnixMilli(fields[0])}, true
}
