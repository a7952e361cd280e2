package ratelimit

import "strconv"

// Algorithm is how a Limit counts events.
type Algorithm int

const (
	// GCRA (the generic cell rate algorithm) is smooth: it spaces events
	// Period/Rate apart and allows bursts up to Burst. In any stretch of
	// time t it allows at most Burst + t×Rate/Period events. It keeps the
	// theoretical arrival time, an integer in microseconds on the server's
	// clock, under this package's name beside the key ("{k}/ratelimit" for
	// a key "k", "{t}:k:ratelimit" for a key "{t}:k"), which lapses when
	// the key is back to its full allowance. A re-sent call (a lost reply
	// that go-redis sends again) moves the time on again, by the events'
	// share, if the limit still allows them, and is refused otherwise:
	// early, never beyond the limit.
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
