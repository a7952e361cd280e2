package ratelimit

import "strconv"

// Algorithm is how a Limit counts events.
type Algorithm int

const (
	// GCRA (the generic cell rate algorithm) is smooth: it spaces events
	// Period/Rate apart and allows bursts up to Burst. In any stretch of
	// time t it allows at most Burst + t×Rate/Period events, and a caller
	// who takes every event as soon as it may gets that many, rounded down
	// (a Burst of 1, which the server's clock of whole µs keeps only to the
	// µs, is refused when that is more than 1% slow; see
	// InexactLimitError). It keeps its data beside the key ("{k}/ratelimit"
	// for a key "k", "{t}:k:ratelimit" for a key "{t}:k"), and lets it
	// lapse when the key is back to its full allowance.
	GCRA Algorithm = iota // smooth; allows bursts up to Burst

	// FixedWindow is the classic counter: the key holds a plain integer,
	// the count of the current window, which expires Period after the
	// window's first event. It allows Rate events per window, and so up to
	// 2×Rate across a window's edge.
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
