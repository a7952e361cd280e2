package waitqueue

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/notice"
	"github.com/slotlimit/slotlimit/internal/observe"
)

// LeaveTimeout bounds the Leave of a waiter that failed (see Run).
const LeaveTimeout = time.Second

// Taking, if not nil, is called by a waiter's goroutine when a notice it
// trusts wakes it, just before it takes what the notice hands it
// (Steps.Take). Tests set it, before any wait starts, to stop their
// process there, across the claim; it is nil otherwise.
var Taking func()

const (
	// MaxPoll caps the sleep between tries when no notice can arrive: for
	// a waiter whose subscription is not confirmed, and for callers that
	// poll because their data sends no notices.
	MaxPoll = 100 * time.Millisecond
	// MinPoll keeps a waiter from spinning when a lease is due at once.
	MinPoll = time.Millisecond
)

// Steps are the parts of a wait that belong to the primitive that waits
// (see Run).
type Steps struct {
	// Try tries to get what the waiter waits for, and otherwise joins the
	// queue or keeps its place in it.
	Try func(ctx context.Context) (Try, error)

	// Take is given what a release handed the waiter, from a notice that
	// can be trusted: what it hands over is still held for the waiter,
	// with time left for a claim sent now to reach the server first. It
	// claims it now if the waiter must hold the claim before it returns
	// (with replicas to acknowledge it), and reports whether the waiter
	// holds it; false makes the waiter try again. It sends nothing it does
	// not wait for: the hand-off may yet be refused (see loop), and a
	// claim sent behind the return is Accept's.
	Take func(h Handed) (bool, error)

	// Accept, if not nil, is told of the hand-off the waiter returns with,
	// once Take holds it and it is still held for the waiter: it records
	// it, and sends behind the return the claim that Take left, if any.
	Accept func(h Handed)

	// Leave takes the waiter out of the queue, and frees what it holds or
	// was handed meanwhile, handing it on to the next waiter. Run calls it,
	// detached from the wait's context and bounded by LeaveTimeout, when
	// the wait fails; it must do nothing to what another holds.
	Leave func(ctx context.Context)

	call *observe.Call // see Observed; nil: not reported
}

// Run is the whole life of one waiter, the same for every primitive that
// waits: it joins the notice channel under name, runs loop with steps
// until the waiter holds what it waits for, and still holds it by the
// server's clock as Run returns, and leaves the channel. When the wait fails (ctx ended, or a call failed), Run calls
// steps.Leave before it returns, if the waiter may be queued or hold
// something, so that a waiter that gave up is never handed anything
// later. It returns loop's error.
func Run(ctx context.Context, site *notice.Site, channel, name string, steps Steps) error {
	w := Join(site, channel, name)
	defer w.Leave()
	mayHold, err := w.loop(ctx, steps)
	if err != nil && (mayHold || callerr.OutcomeUnknown(err)) && steps.Leave != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), LeaveTimeout)
		defer cancel()
		steps.Leave(ctx)
	}
	if c := steps.call; c != nil {
		if !w.refused.IsZero() {
			c.Waited(ctx, w.refused)
		}
		if err == nil && !w.released.IsZero() {
			c.HandedOver(ctx, w.released)
		}
	}
	return err
}

// A Wait is one waiter's place on its queue's notice channel. A notice
// names the waiter a release handed to, and the queue entry it served; it
// wakes the Wait of that name that waits on that entry, and no other. Its
// fields are the waiting goroutine's alone.
type Wait struct {
	*notice.Waiter
	arrival int64         // the waiter's queue entry, from its last try; 0: none
	sent    time.Time     // when that try was sent
	trip    time.Duration // how long that try took, there and back
	clock   time.Time     // the server's clock as that try ran; zero: unknown

	// For an observed wait (see Observed): when its first try was
	// refused, and when the release it was handed ran, on the server's
	// clock; zero: none.
	refused, released time.Time
}

// Join adds a Wait for name on channel at site. It must Leave.
func Join(site *notice.Site, channel, name string) *Wait {
	return &Wait{Waiter: site.Join(channel, name, Name)}
}

// queued records the outcome of the waiter's last try, sent at sent and
// answered at answered.
func (w *Wait) queued(t Try, sent, answered time.Time) {
	w.arrival, w.sent, w.clock = t.Arrival, sent, t.Clock
	w.trip = max(answered.Sub(sent), 0)
	if t.Arrival == 0 {
		w.Expect(nil)
		return
	}
	arrival := t.Arrival
	w.Expect(func(payload string) bool {
		h, ok := parseHanded(payload)
		return ok && h.arrival == arrival
	})
}

// Handed returns what a release handed the waiter's queue entry, if one
// did and the notice can still be trusted (see holds).
func (w *Wait) Handed() (Handed, bool) {
	payload, ok := w.Last()
	if !ok || w.arrival == 0 {
		return Handed{}, false
	}
	h, ok := parseHanded(payload)
	if !ok || h.arrival != w.arrival {
		return Handed{}, false
	}
	return h, w.holds(h)
}

// holds reports whether what h hands over must still be held for the
// waiter, with time to spare for a claim to reach the server.
//
// The server ran the waiter's last try after the try was sent, and the
// hand-off after that try (an earlier hand-off would have made the try
// take what it handed), so the server's clock now is at most the try's
// clock (or, if the try did not read it, the hand-off's) plus the time
// since the try was sent. holds is true only while that bound, plus the
// try's round trip for the claim to come, is before HeldUntil. A waiter
// that was stopped, or slow to read the notice or to take it, thus checks
// with a try instead.
func (w *Wait) holds(h Handed) bool {
	ref := h.HandedAt
	if !w.clock.IsZero() {
		ref = w.clock
	}
	latest := ref.Add(time.Since(w.sent) + w.trip)
	return latest.Before(h.HeldUntil)
}

// A Try is the outcome of one try of a waiter: Done when it got what it
// waits for, and then Lease, if above 0, the least time it holds it for
// from the try's run on the server (its lease time); otherwise Arrival
// names its queue entry (0: not queued), Lapse is when what holds it up
// lapses by itself (0: unknown), and Clock is the server's clock as the
// try ran (zero: the try did not read it).
type Try struct {
	Done    bool
	Lease   time.Duration
	Arrival int64
	Lapse   time.Duration
	Clock   time.Time
}

// loop runs a wait: it calls steps.Try until the try is done, and
// between tries sleeps until a release hands the waiter what it waits
// for, until Lapse, or until the waiter's place in the queue needs
// refreshing (a third of EntryTTL). A handed notice that can be trusted
// (see Handed) goes to steps.Take, which claims what was handed if it
// must before the return, and reports whether the waiter holds it.
//
// What loop returns, the waiter holds on every path: it returns only
// while what it got must still be held for it, by the server's clock.
// Take may take a round trip, with WAIT, and a waiter may be stopped at
// any point, so after Take holds what a notice handed, loop checks again,
// as Handed did, that it is still held for the waiter; a done try whose
// reply came Lease or more after it was sent counts as not done. In both
// cases, as when Take does not hold it or the notice can no longer be
// trusted, loop tries again at once: a try finds what the waiter still
// holds, and takes it for a new lease, or queues it again when another
// took it meanwhile. steps.Accept is told of the hand-off loop returns
// with, and of no other.
//
// loop returns nil once a try is done or a hand-off is accepted.
// Otherwise it returns Try's or Take's error, or ctx's when ctx ends, and
// reports whether the waiter may hold something or be queued, so that
// the caller releases it: always after Take's error or ctx's end, and
// after Try's error once a try has queued it or held something. A try
// whose error leaves its outcome unknown may have queued it too; the
// caller judges that. Run does all of this.
func (w *Wait) loop(ctx context.Context, steps Steps) (mayHold bool, err error) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		sent := time.Now()
		t, err := steps.Try(ctx)
		if err != nil {
			return mayHold, err
		}
		if t.Done {
			if t.Lease <= 0 || time.Since(sent) < t.Lease {
				return false, nil
			}
			// The reply came so late that the lease may have lapsed.
			mayHold = true
			continue
		}
		mayHold = mayHold || t.Arrival != 0
		if steps.call != nil && steps.call.On() && w.refused.IsZero() {
			w.refused = time.Now()
		}
		w.queued(t, sent, time.Now())
		timer.Reset(w.sleep(t.Lapse))
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-w.Wake():
			h, ok := w.Handed()
			if !ok {
				break
			}
			if Taking != nil {
				Taking()
			}
			held, err := steps.Take(h)
			if err != nil {
				return true, err
			}
			if !held || !w.holds(h) {
				break
			}
			if steps.Accept != nil {
				steps.Accept(h)
			}
			w.released = h.HandedAt
			return false, nil
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
