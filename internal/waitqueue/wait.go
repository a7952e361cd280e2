package waitqueue

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/slotlimit/slotlimit/internal/notice"
)

// TrustNotices is how long after a try is sent a notice for the queue
// entry it returned is trusted: what it hands over lasts the claim time,
// EntryTTL, from a moment after that send, so a waiter that reads the
// notice well within it returns at once and its claim, sent then, finds
// it still held. A later notice is checked with a try.
const TrustNotices = EntryTTL - time.Second

const (
	// MaxPoll caps the sleep between tries when no notice can arrive: for
	// a waiter whose subscription is not confirmed, and for callers that
	// poll because their data sends no notices.
	MaxPoll = 100 * time.Millisecond
	// MinPoll keeps a waiter from spinning when a lease is due at once.
	MinPoll = time.Millisecond
)

// A Wait is one waiter's place on its queue's notice channel. A notice
// names the waiter a release handed to, and the queue entry it served; it
// wakes the Wait of that name that waits on that entry, and no other. Its
// fields are the waiting goroutine's alone.
type Wait struct {
	*notice.Waiter
	arrival int64     // the waiter's queue entry, from its last try; 0: none
	trusted time.Time // until when a notice for that entry can be trusted
}

// Join adds a Wait for name on channel at site. It must Leave.
func Join(site *notice.Site, channel, name string) *Wait {
	return &Wait{Waiter: site.Join(channel, name, Name)}
}

// Queued records the queue entry the waiter's last try, sent at sent,
// returned, so that a notice for that entry wakes it, even one that came
// first.
func (w *Wait) Queued(arrival int64, sent time.Time) {
	w.arrival, w.trusted = arrival, sent.Add(TrustNotices)
	if arrival == 0 {
		w.Expect(nil)
		return
	}
	w.Expect(func(payload string) bool {
		h, ok := parseHanded(payload)
		return ok && h.arrival == arrival
	})
}

// Handed returns what a release handed the waiter's queue entry, if one
// did and the notice can still be trusted.
func (w *Wait) Handed() (Handed, bool) {
	payload, ok := w.Last()
	if !ok || w.arrival == 0 || !time.Now().Before(w.trusted) {
		return Handed{}, false
	}
	h, ok := parseHanded(payload)
	return h, ok && h.arrival == w.arrival
}

// A Try is the outcome of one try of a waiter: Done when it got what it
// waits for; otherwise Arrival names its queue entry (0: not queued) and
// Lapse is when what holds it up lapses by itself (0: unknown).
type Try struct {
	Done    bool
	Arrival int64
	Lapse   time.Duration
}

// Loop runs a wait: it calls try until try is done, and between tries
// sleeps until a release hands the waiter what it waits for, until Lapse,
// or until the waiter's place in the queue needs refreshing (a third of
// EntryTTL). A handed notice goes to take, which claims what was handed
// and reports whether the waiter holds it; if it does not (its claim time
// ran out), Loop tries again.
//
// Loop returns nil once try is done or take holds. Otherwise it returns
// try's or take's error, or ctx's when ctx ends, and reports whether the
// waiter may hold something or be queued, so that the caller releases it:
// always after take's error or ctx's end, and after try's error once a
// try has queued it. A try whose error leaves its outcome unknown may have
// queued it too; the caller judges that.
func (w *Wait) Loop(ctx context.Context, try func(context.Context) (Try, error), take func(Handed) (bool, error)) (mayHold bool, err error) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	queued := false
	for {
		sent := time.Now()
		t, err := try(ctx)
		if err != nil {
			return queued, err
		}
		if t.Done {
			return false, nil
		}
		queued = queued || t.Arrival != 0
		w.Queued(t.Arrival, sent)
		timer.Reset(w.sleep(t.Lapse))
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-w.Wake():
			h, ok := w.Handed()
			if !ok {
				break
			}
			held, err := take(h)
			if err != nil {
				return true, err
			}
			if held {
				return false, nil
			}
		case <-timer.C:
		}
	}
}

// sleep is how long a waiter sleeps before it tries again, with lapse the
// time until what holds it up lapses by itself.
func (w *Wait) sleep(lapse time.Duration) time.Duration {
	d := EntryTTL / 3
	if lapse > 0 && lapse < d {
		// Come back just after the lapse, spread over a little time.
		d = lapse + MinPoll + rand.N(min(lapse/8, 25*time.Millisecond)+1)
	}
	if !w.Ready() {
		d = min(d, PollDelay(MaxPoll))
	}
	return d
}

// PollDelay is a random time in [d/2, d], with d the hint clamped to
// [MinPoll, MaxPoll]; no hint means MaxPoll.
func PollDelay(hint time.Duration) time.Duration {
	if hint <= 0 {
		hint = MaxPoll
	}
	d := min(max(hint, MinPoll), MaxPoll)
	return d/2 + rand.N(d/2+1)
}
