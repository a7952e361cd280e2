package ratelimit

import "strconv"

// Algorithm is how a Limit counts events.
type Algorithm int

const (
	// GCRA (the generic cell rate algorithm) is smooth: it spaces events
	// Period/Rate apart and allows bursts up to Burst. In any stretch of
	// time t it allows at most Burst + t×Rate/Period events, and it keeps
	// that rate exactly: each event moves the time by exactly Period/Rate,
	// a whole number of µs or not, so a caller who takes every event as
	// soon as it may gets Burst + t×Rate/Period of them, rounded down (a
	// Burst of 1, which the server's clock of whole µs can keep only to
	// the µs, is refused when that is more than 1% slow; see
	// InexactLimitError). It keeps the theoretical arrival time, in µs on
	// the server's clock, under this package's name beside the key
	// ("{k}/ratelimit" for a key "k", "{t}:k:ratelimit" for a key
	// "{t}:k"): an integer, followed, when a share is not a whole µs, by
	// the fraction of a µs past it ("1700000000333333+1/3"). It lapses
	// when the key is back to its full allowance. A re-sent call (a lost
	// reply that go-redis sends again) moves the time on again, by the
	// events' share, if the limit still allows them, and is refused
	// otherwise: early, never beyond the limit.
	GCRA Algorithm = iota // smooth; allows bursts up to Burst

	// FixedWindow is the classic counter: the key holds a plain integer,
	// the count of the current window, which expires Period after the
	// window's first event. It allows Rate events per window, and so up
	// to 2×Rate across a window's edge. A re-sent call counts the events
	// again if the window still has room for them, and is refused
	// otherwise: early, never beyond Rate in a window.
	FixedWindow // the classic counter: INCR, with the window's expiry set on the first hit
)

// String returns "gcra" or "fixed window".
func (a Algorithm) String() string {
	switch a {
	case GCRA:
		return "gcra"
	case FixedWindow:
		return "fixed window"
	}
	return "algorithm(" + strconv.Itoa(int(a)) + ")"
}
