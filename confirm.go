package slotlimit

import (
	"context"
	"time"
)

// Units a release hands to a waiter come with a short claim deadline (see
// scripts/release.lua), so that units handed to a waiter that died return
// within seconds. The waiter's Limiter confirms the lease, renewing it to
// its full TTL, a little later and off the waiter's path; a release that
// comes first makes the confirmation unneeded, and work shorter than that
// costs no extra call at all.

// confirmAfter is when a handed lease is confirmed: well within its claim
// time, queueTTL.
const confirmAfter = queueTTL / 3

// confirmLater schedules the confirmation of holder's handed lease.
func (l *Limiter) confirmLater(holder string) {
	l.confirmMu.Lock()
	defer l.confirmMu.Unlock()
	if t := l.confirms[holder]; t != nil {
		t.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(confirmAfter, func() {
		l.confirmMu.Lock()
		mine := l.confirms[holder] == t
		if mine {
			delete(l.confirms, holder)
			l.pendingConfirms.Add(-1)
		}
		l.confirmMu.Unlock()
		if mine {
			l.confirm(holder)
		}
	})
	if l.confirms == nil {
		l.confirms = map[string]*time.Timer{}
	}
	if l.confirms[holder] == nil {
		l.pendingConfirms.Add(1)
	}
	l.confirms[holder] = t
}

// cancelConfirm drops a pending confirmation of holder's lease: it was
// released or renewed.
func (l *Limiter) cancelConfirm(holder string) {
	if l.pendingConfirms.Load() == 0 {
		return
	}
	l.confirmMu.Lock()
	defer l.confirmMu.Unlock()
	if t := l.confirms[holder]; t != nil {
		t.Stop()
		delete(l.confirms, holder)
		l.pendingConfirms.Add(-1)
	}
}

// confirm renews holder's handed lease to its full TTL, trying again until
// the claim time is nearly up. A lease that is gone (released elsewhere,
// or lapsed) is left gone: renewal never re-acquires.
func (l *Limiter) confirm(holder string) {
	deadline := time.Now().Add(queueTTL - confirmAfter - 100*time.Millisecond)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		_, _, err := l.renew(ctx, holder)
		cancel()
		if err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
